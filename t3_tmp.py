from tests.kernels import mm_relu
from mlckit.notebook.side_by_side import side_by_side
v = side_by_side(mm_relu)
print(v)
print(v.linked_lines(8), v.linked_tvmscript_lines(4))
open('/tmp/sbs.html','w').write("<html><body>"+v.html()+"</body></html>")
import mlckit.tir as tir
sch = tir.Schedule(mm_relu)
i, j, k = sch.get_loops(sch.get_block("Y"))
i0, i1 = sch.split(i, factors=[None, 4])
sch.parallel(i0)
sch.reorder(i0, j, i1)
print(side_by_side(sch.mod))
