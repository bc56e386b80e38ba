import numpy as np, mlckit
from mlckit import relax
from mlckit.script import from_source
from tests.notebook.programs import MLP_MODULE
mod = from_source(MLP_MODULE)
ex = relax.build(mod, target="lnumpy")
vm = relax.VirtualMachine(ex, mlckit.cpu())
rng = np.random.default_rng(0)
args = [mlckit.nd.array(rng.standard_normal(s).astype("float32")) for s in [(2, 784), (128, 784), (128,), (10, 128), (10,)]]
r = vm.profile(*args)
open('/tmp/prof.html','w').write("<html><body>"+r._repr_html_()+ex._repr_html_()+"</body></html>")
