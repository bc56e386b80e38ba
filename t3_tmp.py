from mlckit.script import from_source
from tests.notebook.programs import MLP_MODULE
from tests.kernels import mm_relu
from mlckit.notebook.graph import graph
import mlckit.relax as relax
mod = from_source(MLP_MODULE)
g = graph(mod)
print(g.source)
print(graph(mm_relu).source)
low = relax.vm_lowering_pipeline()(mod)
s = graph(low).source
print(len(s))
open('/tmp/g.svg','wb').write(graph(low).pipe(format='svg'))
open('/tmp/g2.png','wb').write(graph(mod).pipe(format='png'))
open('/tmp/g3.png','wb').write(graph(mm_relu).pipe(format='png'))
