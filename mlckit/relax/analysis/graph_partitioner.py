"""Fusion groups from post-dominators (TVM's ``GraphPartitioner``), used by ``FuseOps``.

The input is an *indexed forward graph*: one node per value (parameters, constants, bound
variables) in post-DFS order, each with its ``OpPatternKind`` and its output edges (the
consumers, with the consumer's pattern).  The partitioner

1. builds the post-dominator tree: a node's parent is the closest node all of its paths
   to an output go through (found as the least common ancestor of its consumers, which
   works because the graph is a DAG); the tree node remembers the largest pattern met on
   the way (``pattern``);
2. walks the nodes three times (phases) and merges a node's group into its post-dominator's
   group when TVM's rules allow it:

   - phase 0: a ``kOutEWiseFusable`` node (matmul) joins an element-wise post-dominator
     when every node on the paths between them is at most ``kBroadcast``; a node at most
     ``kBroadcast`` joins a post-dominator reached through injective or reduction patterns
     when the paths are injective (the sink may be ``kOutEWiseFusable`` already);
   - phase 1: ``kInjective`` nodes join when all paths are injective;
   - phase 2: injective nodes join intermediate tuples.

Groups are a union-find; a group holding a ``kOutEWiseFusable`` node has it as ``anchor``
and cannot take a second one.

Example::

    groups = GraphPartitioner(opt_level=2, max_fuse_depth=256).partition(graph)
    groups[i].find_root()      # the group of node i
"""

from __future__ import annotations

from mlckit.error import InternalError

from .tir_op_pattern_kind import OpPatternKind as K


class GraphNode:
    """A value of the graph: ``ref`` (the Var or Constant), its ``index`` in post-DFS order,
    its ``pattern``, ``extern_ref`` (visible outside: parameters and block outputs) and its
    consumers ``outputs`` as ``(node, edge pattern)``.

    Example::

        node = GraphNode(); node.pattern = OpPatternKind.kElemWise
    """

    __slots__ = ("ref", "index", "pattern", "extern_ref", "outputs")

    def __init__(self):
        self.ref = None
        self.index = -1
        self.pattern = K.kOpaque
        self.extern_ref = False
        self.outputs: list[tuple[GraphNode, K]] = []


class IndexedForwardGraph:
    """Nodes keyed by ``id`` of the object they stand for, and the post-DFS order.

    Example::

        graph = IndexedForwardGraph(); graph.post_dfs_order      # []
    """

    def __init__(self):
        self.node_map: dict[int, GraphNode] = {}
        self.post_dfs_order: list[GraphNode] = []


class _DomNode:
    __slots__ = ("gnode", "parent", "depth", "pattern")

    def __init__(self, gnode: GraphNode):
        self.gnode = gnode
        self.parent: _DomNode | None = None
        self.depth = 1
        self.pattern = K.kOpaque


def post_dominator_tree(graph: IndexedForwardGraph) -> list[_DomNode]:
    """The post-dominator tree node of every graph node (by index).

    Example::

        tree = post_dominator_tree(graph); tree[i].parent.gnode    # i's post-dominator
    """
    nodes: list = [None] * len(graph.post_dfs_order)
    for index in range(len(graph.post_dfs_order) - 1, -1, -1):
        gnode = graph.post_dfs_order[index]
        tnode = _DomNode(gnode)
        if not gnode.extern_ref:
            pattern = [K.kElemWise]
            parent = _lca_of_outputs(nodes, gnode.outputs, pattern)
            tnode.depth = parent.depth + 1 if parent is not None else 1
            tnode.parent = parent
            tnode.pattern = pattern[0]
        nodes[index] = tnode
    return nodes


def _lca_of_outputs(nodes: list, outputs: list, pattern: list) -> _DomNode | None:
    if not outputs:
        return None
    first, edge = outputs[0]
    parent = nodes[first.index]
    pattern[0] = max(pattern[0], edge)
    for node, edge in outputs[1:]:
        parent = _lca(parent, nodes[node.index], pattern)
        pattern[0] = max(pattern[0], edge)
    return parent


def _lca(lhs: _DomNode | None, rhs: _DomNode | None, pattern: list) -> _DomNode | None:
    while lhs is not rhs:
        if lhs is None or rhs is None:
            return None
        if lhs.depth < rhs.depth:
            pattern[0] = max(pattern[0], rhs.pattern)
            rhs = rhs.parent
        elif rhs.depth < lhs.depth:
            pattern[0] = max(pattern[0], lhs.pattern)
            lhs = lhs.parent
        else:
            pattern[0] = max(pattern[0], lhs.pattern, rhs.pattern)
            lhs, rhs = lhs.parent, rhs.parent
    return lhs


class Group:
    """A fusion group (union-find): ``pattern``, ``root_ref``, ``anchor_ref`` (its
    ``kOutEWiseFusable`` node, if any), ``num_nodes`` and ``attrs`` for the fused function.

    Example::

        group.find_root().num_nodes        # the size of the group ``group`` is in
    """

    __slots__ = ("parent", "pattern", "root_ref", "anchor_ref", "num_nodes", "attrs")

    def __init__(self, pattern: K, ref):
        self.parent: Group | None = None
        self.pattern = pattern
        self.root_ref = ref
        self.anchor_ref = ref if pattern == K.kOutEWiseFusable else None
        self.num_nodes = 1
        self.attrs: dict = {}

    def find_root(self) -> Group:
        root = self
        while root.parent is not None:
            root = root.parent
        node = self
        while node is not root:  # path compression
            node.parent, node = root, node.parent
        return root


def _combine_groups(lhs: K, rhs: K) -> K:
    if lhs > K.kBroadcast and rhs > K.kBroadcast:
        raise InternalError("FuseOps: cannot merge two complex groups (two kOutEWiseFusable or "
                            "reduction anchors) into one")
    return max(lhs, rhs)


class GraphPartitioner:
    """Partition an ``IndexedForwardGraph`` into fusion groups (see the module doc).

    ``opt_level`` 0 fuses nothing; ``max_fuse_depth`` bounds the nodes of a group.

    Example::

        groups = GraphPartitioner(opt_level=2).partition(graph)
    """

    def __init__(self, opt_level: int, max_fuse_depth: int = 256):
        self.opt_level = opt_level
        self.max_fuse_depth = max_fuse_depth
        self.groups: list[Group] = []
        self._visited: set[int] = set()

    def partition(self, graph: IndexedForwardGraph) -> list[Group]:
        """The group of every node (index by post-DFS index; call ``find_root()``)."""
        self.groups = [Group(n.pattern, n.ref) for n in graph.post_dfs_order]
        if self.opt_level == 0:
            return self.groups
        tree = post_dominator_tree(graph)
        for phase in range(3):
            self._run_fuse(graph, tree, phase)
        return self.groups

    # -- union-find plumbing ------------------------------------------------------------------
    def _check_path(self, src: GraphNode, sink: GraphNode, fcond) -> bool:
        if src.extern_ref or src is sink:
            raise InternalError("FuseOps: a path check must start at an inner node")
        self._visited = set()
        return all(self._check_path_from(node, sink, fcond) for node, _ in src.outputs)

    def _check_path_from(self, src: GraphNode, sink: GraphNode, fcond) -> bool:
        if id(src) in self._visited:
            return True
        self._visited.add(id(src))
        group = self.groups[src.index].find_root()
        if not fcond(group.pattern, src is sink):
            return False
        if src is sink:
            return True
        return all(self._check_path_from(node, sink, fcond) for node, _ in src.outputs)

    def _merge(self, child: Group, parent: Group) -> None:
        child, parent = child.find_root(), parent.find_root()
        if child is parent:
            return
        parent.num_nodes += child.num_nodes
        child.parent = parent
        if child.anchor_ref is not None:
            if parent.anchor_ref is not None:
                raise InternalError("FuseOps: a group cannot have two anchors")
            parent.anchor_ref = child.anchor_ref
            parent.pattern = _combine_groups(child.pattern, parent.pattern)

    def _commit_fuse(self, src: GraphNode, sink: GraphNode) -> None:
        target = self.groups[sink.index]
        self._visited = set()
        self._commit_fuse_from(src, sink, target)

    def _commit_fuse_from(self, src: GraphNode, sink: GraphNode, target: Group) -> None:
        if src is sink or id(src) in self._visited:
            return
        self._visited.add(id(src))
        self._merge(self.groups[src.index], target)
        for node, _ in src.outputs:
            self._commit_fuse_from(node, sink, target)

    def _count_nodes_up_to_sink(self, src: GraphNode, sink: GraphNode) -> int:
        if src is sink or id(src) in self._visited:
            return 0
        self._visited.add(id(src))
        total = self.groups[src.index].num_nodes
        for node, _ in src.outputs:
            total += self._count_nodes_up_to_sink(node, sink)
        return total

    def _count_fused_nodes_with_new_child(self, child: GraphNode, dom_parent: GraphNode) -> int:
        target = self.groups[dom_parent.index]
        self._visited = set()
        return target.find_root().num_nodes + self._count_nodes_up_to_sink(child, dom_parent)

    # -- the rules ------------------------------------------------------------------------------
    def _run_fuse(self, graph: IndexedForwardGraph, tree: list, phase: int) -> None:
        for nid, gnode in enumerate(graph.post_dfs_order):
            dom_node = tree[nid]
            group = self.groups[nid]
            if group.pattern == K.kOpaque or dom_node.parent is None:
                continue
            dom_parent = dom_node.parent.gnode
            if self._count_fused_nodes_with_new_child(gnode, dom_parent) > self.max_fuse_depth:
                continue
            parent_group = self.groups[dom_parent.index]
            if phase == 2:
                self._fuse_into_tuple(gnode, dom_node, group, parent_group)
                continue
            if group.find_root() is parent_group.find_root():
                continue
            if parent_group.pattern == K.kTuple:
                continue
            if group.pattern == K.kOutEWiseFusable:
                # matmul/conv: only in phase 0, into an element-wise post-dominator through
                # paths that are at most broadcast
                if phase == 0 and dom_node.pattern == K.kElemWise and self._check_path(
                        gnode, dom_parent, lambda kind, is_sink: kind <= K.kBroadcast):
                    self._commit_fuse(gnode, dom_parent)
            elif group.pattern <= K.kBroadcast:
                if dom_node.pattern <= K.kInjective or dom_node.pattern == K.kCommReduce:
                    if self._check_path(gnode, dom_parent, _broadcast_path_condition):
                        self._commit_fuse(gnode, dom_parent)
            elif group.pattern in (K.kInjective, K.kTuple):
                # injective fusion waits for phase 1, so that matmul groups finish first
                if phase == 1 and self._check_path(
                        gnode, dom_parent, lambda kind, is_sink: kind <= K.kInjective):
                    self._commit_fuse(gnode, dom_parent)

    def _fuse_into_tuple(self, gnode, dom_node, group: Group, parent_group: Group) -> None:
        if group.pattern > K.kInjective:
            return
        root = parent_group.find_root()
        if root.pattern == K.kTuple:
            return
        if parent_group.pattern == K.kTuple and root.pattern <= K.kInjective:
            dom_parent = dom_node.parent.gnode
            if self._check_path(gnode, dom_parent, lambda kind, is_sink: kind <= K.kInjective):
                self._commit_fuse(gnode, dom_parent)


def _broadcast_path_condition(kind: K, is_sink: bool) -> bool:
    # element-wise, broadcast and injective ops on parallel branches may join the anchor;
    # the sink may already be in a kOutEWiseFusable group
    if not is_sink:
        return kind <= K.kInjective
    return kind <= K.kBroadcast or kind in (K.kCommReduce, K.kInjective, K.kOutEWiseFusable)


__all__ = ["GraphNode", "GraphPartitioner", "Group", "IndexedForwardGraph",
           "post_dominator_tree"]
