"""Moves along the timeline, Blender side: a controller's own list of moves
(``obj.motion_matching.moves``: frame, tag query), else the scene's timeline
markers named ``mm: QUERY`` (``mm:`` alone goes back to the scene's Tag
Query), read as a core.paths.moves.Moves for the bake."""

from ...core.paths.moves import Moves

MARKER_PREFIX = "mm:"


def marker_query(name):
    """The tag query of a marker named ``mm: QUERY`` ('' for ``mm:`` alone), None for any other marker."""
    text = name.strip()
    if text[:len(MARKER_PREFIX)].lower() != MARKER_PREFIX:
        return None
    return text[len(MARKER_PREFIX):].strip()


def marker_moves(scene):
    """The moves the scene's timeline markers name (for every controller without its own)."""
    pairs = [(m.frame, marker_query(m.name)) for m in scene.timeline_markers]
    return Moves.of([(f, q) for f, q in pairs if q is not None])


def own_moves(obj):
    """The moves of the controller's own list (any order in the list)."""
    return Moves.of([(m.frame, m.query) for m in obj.motion_matching.moves])


def controller_moves(scene, obj):
    """The moves the bake of ``obj`` follows: its own list when it has one, else the scene's markers."""
    if obj is not None and len(obj.motion_matching.moves):
        return own_moves(obj)
    return marker_moves(scene)


def sort_moves(obj):
    """Put the controller's list in frame order (the active move stays the same move)."""
    moves = obj.motion_matching.moves
    active = obj.motion_matching.active_move
    for target in range(len(moves)):
        current = [m.frame for m in moves]
        source = min(range(target, len(moves)), key=lambda i: current[i])
        if source != target:
            moves.move(source, target)
            if active == source:
                active = target
            elif target <= active < source:
                active += 1
    obj.motion_matching.active_move = min(active, max(len(moves) - 1, 0))


def add_move(obj, frame, query):
    """Add a move to the controller's list (kept in frame order); returns its index."""
    move = obj.motion_matching.moves.add()
    move.frame, move.query = float(frame), query
    obj.motion_matching.active_move = len(obj.motion_matching.moves) - 1
    sort_moves(obj)
    return obj.motion_matching.active_move


def store_moves(obj, moves):
    """Replace the controller's list with ``moves`` (core Moves)."""
    obj.motion_matching.moves.clear()
    for frame, query in zip(moves.frames, moves.queries):
        move = obj.motion_matching.moves.add()
        move.frame, move.query = frame, query
    obj.motion_matching.active_move = 0
