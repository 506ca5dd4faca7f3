"""The canonical humanoid joints (Unity's HumanBodyBones names), a mapping of
bones onto them (:class:`Mapping`) and the check that a mapping fits a skeleton.
"""

from ..errors import MotionMatchingError
from ..io.text_input import short_repr


class HumanoidError(MotionMatchingError):
    """A humanoid mapping that cannot be made or used."""


CANONICAL = (
    "Hips", "Spine", "Chest", "UpperChest", "Neck", "Head",
    "LeftShoulder", "LeftUpperArm", "LeftLowerArm", "LeftHand",
    "RightShoulder", "RightUpperArm", "RightLowerArm", "RightHand",
    "LeftUpperLeg", "LeftLowerLeg", "LeftFoot", "LeftToes",
    "RightUpperLeg", "RightLowerLeg", "RightFoot", "RightToes",
)
REQUIRED = (
    "Hips", "Spine", "Head",
    "LeftUpperArm", "LeftLowerArm", "LeftHand",
    "RightUpperArm", "RightLowerArm", "RightHand",
    "LeftUpperLeg", "LeftLowerLeg", "LeftFoot",
    "RightUpperLeg", "RightLowerLeg", "RightFoot",
)
OPTIONAL = tuple(j for j in CANONICAL if j not in REQUIRED)

# Each joint's nearest canonical ancestor (used to check hierarchy fills).
CANON_PARENT = {
    "Hips": None, "Spine": "Hips", "Chest": "Spine", "UpperChest": "Chest",
    "Neck": "UpperChest", "Head": "Neck",
}
for _s in ("Left", "Right"):
    CANON_PARENT.update({
        _s + "Shoulder": "UpperChest", _s + "UpperArm": _s + "Shoulder",
        _s + "LowerArm": _s + "UpperArm", _s + "Hand": _s + "LowerArm",
        _s + "UpperLeg": "Hips", _s + "LowerLeg": _s + "UpperLeg",
        _s + "Foot": _s + "LowerLeg", _s + "Toes": _s + "Foot",
    })
CANON_CHILDREN = {j: [c for c in CANONICAL if CANON_PARENT[c] == j] for j in CANONICAL}


class Mapping(dict):
    """``{canonical joint: bone name}`` in canonical order.

    ``method`` is "names", "hierarchy" or "preset"; ``from_hierarchy`` lists the
    joints the hierarchy added to a name mapping; ``missing_required`` is
    worked out from the current contents.
    """

    def __init__(self, joints=(), method="names", from_hierarchy=()):
        joints = dict(joints)
        ordered = [(j, joints.pop(j)) for j in CANONICAL if j in joints]
        super().__init__(ordered + list(joints.items()))
        self.method = method
        self.from_hierarchy = [j for j in CANONICAL if j in set(from_hierarchy)]

    @property
    def missing_required(self):
        return [j for j in REQUIRED if not self.get(j)]

    def __repr__(self):
        return "Mapping(%s, method=%r)" % (dict.__repr__(self), self.method)


def spine_positions(chain):
    """{Spine, Chest, UpperChest: bone} from the spine chain (hips end first):
    Spine the first, Chest the second, UpperChest the last of three or more."""
    out = {}
    if chain:
        out["Spine"] = chain[0]
    if len(chain) >= 2:
        out["Chest"] = chain[1]
    if len(chain) >= 3:
        out["UpperChest"] = chain[-1]
    return out


def _join(items):
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def check_mapping(mapping, names):
    """Raise :class:`HumanoidError` unless ``mapping`` is usable on a skeleton
    with bone ``names``: every problem is listed in one message (unknown
    joints, bones not in the skeleton, a bone used twice, missing required
    joints)."""
    names = set(names)
    problems = []
    unknown = [k for k in mapping if k not in CANONICAL]
    if unknown:
        problems.append("Unknown humanoid joints: %s (the joints are %s)."
                        % (", ".join(map(short_repr, unknown)), ", ".join(CANONICAL)))
    bad = [k for k in mapping if k in CANONICAL and mapping[k] is not None
           and not isinstance(mapping[k], str)]
    for k in bad:
        problems.append("The bone for %s must be a name, not %s." % (k, short_repr(mapping[k])))
    pairs = [(k, mapping[k]) for k in CANONICAL if isinstance(mapping.get(k), str) and mapping[k]]
    absent = [(k, b) for k, b in pairs if b not in names]
    if absent:
        problems.append("These bones are not in the skeleton: %s."
                        % ", ".join("'%s' (%s)" % (b if len(b) <= 64 else b[:64] + "...", k) for k, b in absent))
    joints_of = {}
    for k, b in pairs:
        joints_of.setdefault(b, []).append(k)
    for b, joints in joints_of.items():
        if len(joints) > 1:
            times = "twice" if len(joints) == 2 else "%d times" % len(joints)
            problems.append("Bone '%s' is mapped %s: %s." % (b, times, _join(joints)))
    missing = [j for j in REQUIRED if not (isinstance(mapping.get(j), str) and mapping[j])]
    if missing:
        problems.append("The mapping lacks required joints: %s." % ", ".join(missing))
    if problems:
        raise HumanoidError(" ".join(problems))
