"""Printing tensor-expression nodes (``te.compute`` bodies), as TVM prints them.

``A[i, k]`` (a ProducerLoad) prints as the tensor's name indexed; a reduction prints as
``T.reduce(T.comm_reducer(lambda x, y: x + y, [T.float32(0.0)]), source=[...], ...)``.
"""

from __future__ import annotations

from mlckit.te.reduce import CommReducer, Reduce
from mlckit.te.tensor import ProducerLoad

from . import doc as D
from .core import IRDocsifier, register


@register(ProducerLoad)
def _producer_load(node: ProducerLoad, d: IRDocsifier) -> D.Doc:
    return D.IdDoc(node.producer.name)[[d.expr(i) for i in node.indices]]


@register(CommReducer)
def _comm_reducer(node: CommReducer, d: IRDocsifier) -> D.Doc:
    params = [D.IdDoc(v.name_hint) for v in node.lhs + node.rhs]
    for v, p in zip(node.lhs + node.rhs, params):
        d.define_creator(v, d.frames[-1], lambda p=p: p)
    results = [d.expr(r) for r in node.result]
    body = results[0] if len(results) == 1 else D.TupleDoc(results)
    identity = D.ListDoc([d.expr(e) for e in node.identity_element])
    return d.TIR("comm_reducer").call(D.LambdaDoc(params, body), identity)


@register(Reduce)
def _reduce(node: Reduce, d: IRDocsifier) -> D.Doc:
    return d.TIR("reduce").call_kw(
        [d.expr(node.combiner)],
        [("source", d.expr(node.source)), ("init", d.expr(node.init)),
         ("axis", d.expr(node.axis)), ("condition", d.expr(node.condition)),
         ("value_index", D.LiteralDoc(node.value_index))],
    )
