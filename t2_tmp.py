import time
from mlckit.script import from_source
from tests.notebook.programs import MLP_MODULE
mod = from_source(MLP_MODULE)
from mlckit.notebook import PassStepper
t=time.perf_counter()
s = PassStepper(mod)
print(time.perf_counter()-t)
print(s)
print(s.diff(1)[:1500])
v = s.view()
v.show(2)
print(v.title.value)
v.mode.value="side_by_side"
print(v.diff.value[:800])
print(s._repr_mimebundle_().keys())
