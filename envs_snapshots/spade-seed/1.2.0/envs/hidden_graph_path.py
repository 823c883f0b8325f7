"""Find a cheapest route in a hidden weighted graph whose edges appear only when you expand a node.

Teaches graph reasoning with Dijkstra's algorithm: always expand the unexpanded node with the
smallest known distance, because the route with the fewest hops is usually not the cheapest.
Difficulty levels grow the graph (4 nodes at level 0, 10 at the top); only level 0 allows the
fewest-hop route to be the cheapest.
"""

import heapq
import random
import re
import string

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_NODES = 10
_EXTRA_EDGES = 6

# Difficulty levels: (nodes, extra edges beyond a spanning tree, whether the cheapest route
# must avoid the fewest hops, turn budget). The top level is the original task.
LEVELS = [
    (4, 1, False, 5),
    (5, 2, True, 7),
    (6, 3, True, 9),
    (8, 4, True, 12),
    (_NODES, _EXTRA_EDGES, True, 16),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


def _command(action):
    """Split the last \\boxed{...} of the action into (verb, argument text)."""
    found = _BOXED.findall(action) if isinstance(action, str) else []
    parts = found[-1].strip().split(maxsplit=1) if found else []
    if not parts:
        return "", ""
    return parts[0].lower(), parts[1] if len(parts) > 1 else ""


def _random_graph(rng, nodes=_NODES, extra_edges=_EXTRA_EDGES):
    """A connected undirected graph {node: {neighbour: weight}} on random letters."""
    names = rng.sample(string.ascii_uppercase, nodes)
    graph = {name: {} for name in names}

    def connect(u, v):
        graph[u][v] = graph[v][u] = rng.randint(1, 9)

    for i in range(1, nodes):
        connect(names[i], names[rng.randrange(i)])
    added = 0
    while added < extra_edges:
        u, v = rng.sample(names, 2)
        if v not in graph[u]:
            connect(u, v)
            added += 1
    return graph


def _distances(graph, source):
    dist, heap = {source: 0}, [(0, source)]
    while heap:
        d, node = heapq.heappop(heap)
        if d > dist[node]:
            continue
        for nxt, w in graph[node].items():
            if d + w < dist.get(nxt, float("inf")):
                dist[nxt] = d + w
                heapq.heappush(heap, (d + w, nxt))
    return dist


def _fewest_hops_cost(graph, source, goal):
    """(hop count, cheapest cost among routes with that hop count) from source to goal."""
    best = {source: (0, 0)}
    frontier = [source]
    while goal not in best:
        layer = {}
        for node in frontier:
            hops, cost = best[node]
            for nxt, w in graph[node].items():
                if nxt not in best and cost + w < layer.get(nxt, (0, float("inf")))[1]:
                    layer[nxt] = (hops + 1, cost + w)
        best.update(layer)
        frontier = list(layer)
    return best[goal]


class HiddenGraphPathEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "reasoning",
        "split": "train",
        "skill": "graph reasoning",
        "difficulty": "hard",
        "hint": "Run Dijkstra by hand: keep a table of the best known distance to every node "
        "seen, always expand the unexpanded node with the smallest distance, and relax its "
        "edges, remembering each node's predecessor. Once the goal has the smallest distance "
        "in the table its route is final: rebuild it from the predecessors. Do not trust the "
        "route with the fewest hops.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        self.nodes, self.extra_edges, self.tricky, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        while not self._choose_instance():
            pass
        self.expanded = []
        self.seen = {self.start}
        self.turns = 0
        self.ended = None
        self.reward = 0.0
        obs = (
            f"A hidden undirected graph has {self.nodes} nodes named by letters, with positive "
            f"integer edge weights. Find a cheapest route from {self.start} to {self.goal}. "
            "Commands: \\boxed{expand X} lists the neighbours of a node X you have already "
            f"seen (initially only {self.start}) with edge weights; \\boxed{{path {self.start} "
            f"... {self.goal}}} submits a route (node letters in order) and ends the episode. "
            f"You have {self.max_turns} turns."
        )
        return obs, {"start": self.start, "goal": self.goal}

    def _choose_instance(self):
        """Draw a graph and endpoints where the goal is not a neighbour of the start and (when
        the level is tricky) the cheapest route is not a fewest-hop route."""
        self.graph = _random_graph(self._rng, self.nodes, self.extra_edges)
        self.start, self.goal = self._rng.sample(sorted(self.graph), 2)
        self.dist = _distances(self.graph, self.start)
        hops, cost = _fewest_hops_cost(self.graph, self.start, self.goal)
        return hops >= 2 and (cost > self.dist[self.goal] or not self.tricky)

    def _required(self):
        """Nodes Dijkstra must expand before the goal's distance is final."""
        return {n for n, d in self.dist.items() if d < self.dist[self.goal]}

    def _expand(self, node):
        self.expanded.append(node)
        self.seen.update(self.graph[node])
        required = self._required()
        share = len(required.intersection(self.expanded)) / len(required)
        self.reward = max(self.reward, 0.3 * share)
        edges = ", ".join(f"{n} {w}" for n, w in sorted(self.graph[node].items()))
        return f"{node}: {edges}"

    def _route_cost(self, route):
        if len(route) < 2 or route[0] != self.start or route[-1] != self.goal:
            return None
        steps = list(zip(route, route[1:], strict=False))
        if any(v not in self.graph.get(u, {}) for u, v in steps):
            return None
        return sum(self.graph[u][v] for u, v in steps)

    def _submit(self, route):
        cost, best = self._route_cost(route), self.dist[self.goal]
        if cost is None:
            return f"Not a route from {self.start} to {self.goal} along existing edges."
        if cost == best:
            self.reward = 1.0
            return f"Correct! Cost {cost} is the cheapest possible."
        self.reward = max(self.reward, 0.3 + 0.5 * best / cost)
        return f"Valid route of cost {cost}, but the cheapest costs {best}."

    def step(self, action):
        if self.ended:  # stepping after the end changes nothing
            return "The episode is over.", round(self.reward, 4), *self.ended, {"turn": self.turns}
        self.turns += 1
        verb, rest = _command(action)
        nodes = [n for n in re.split(r"[\s,>-]+", rest.upper()) if n]
        done = False
        if verb == "expand" and len(nodes) == 1 and nodes[0] in self.seen:
            obs = self._expand(nodes[0])
        elif verb == "path" and nodes:
            obs, done = self._submit(nodes), True
        else:
            obs = (
                "Invalid action. Use \\boxed{expand X} for a node you have seen "
                f"({', '.join(sorted(self.seen))}) or \\boxed{{path {self.start} ... {self.goal}}}."
            )
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        done = done or self.turns >= self.max_turns
        self.ended = (done, False) if done else None
        info = {"turn": self.turns, "expanded": list(self.expanded)}
        return obs, round(self.reward, 4), done, False, info

    def solution(self):
        dist, parent, heap, done = {self.start: 0}, {}, [(0, self.start)], set()
        actions = []
        while heap:
            d, node = heapq.heappop(heap)
            if node in done:
                continue
            if node == self.goal:
                break
            done.add(node)
            actions.append(f"\\boxed{{expand {node}}}")
            for nxt, w in self.graph[node].items():
                if d + w < dist.get(nxt, float("inf")):
                    dist[nxt], parent[nxt] = d + w, node
                    heapq.heappush(heap, (d + w, nxt))
        route = [self.goal]
        while route[-1] != self.start:
            route.append(parent[route[-1]])
        return actions + ["\\boxed{path " + " ".join(reversed(route)) + "}"]

    def close(self):
        pass
