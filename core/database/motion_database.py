"""The whole motion database: what search matches and what the bake plays.

:class:`MotionDatabase` holds the matching part (:class:`Database`: features,
normalisation, clips, valid rows, contacts) and, typed, everything else a
database file carries: the skeleton, every row's pose, the root frames, the toe
and ankle tracks, the tags, the clips' actions, the feature bones and the
fingerprint of the inputs.

:meth:`MotionDatabase.from_arrays` checks arrays completely
(:mod:`core.database.checks`) before building the object;
:meth:`MotionDatabase.to_arrays` writes the same keys back in the same format
(the .npz layout of the README). Arrays are kept as they were stored (a file
from elsewhere may hold float64 poses; a build writes float32).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields

import numpy as np

from .checks import check_arrays, read_database
from .feature_database import Database
from .feature_spec import feature_names, feature_weights
from .file_layout import ADDON_FORMAT
from .tags import Tag

__all__ = ["Skeleton", "Poses", "RootFrames", "FeatureBones", "ClipInfo", "SourceRecord", "MotionDatabase"]


@dataclass
class Skeleton:
    """The database's bones, parents before children."""

    names: list            # (J,) bone names
    parents: np.ndarray    # (J,) parent index of each bone, -1 for none
    rest: np.ndarray       # (J, 4, 4) armature-space rest matrices
    offsets: np.ndarray    # (J, 4, 4) each bone's rest relative to its parent, as Blender evaluates poses


@dataclass
class SourceRecord:
    """The armature the database was built from, as a bake onto another rig reads
    it, so that a file holding only the character can bake (its object frame,
    bone lengths, humanoid mapping and T-pose when the database was built)."""

    name: str
    matrix_world: np.ndarray   # (4, 4) the armature object's world matrix
    bone_lengths: np.ndarray   # (J,) rest bone lengths
    mapping: dict              # canonical humanoid joint -> bone name
    tpose: np.ndarray          # (J, 7) armature-space rotation (w, x, y, z) and head per bone
    tpose_known: np.ndarray    # (J,) False where the T-pose does not hold the bone
    tpose_words: str           # where the T-pose came from, in words
    notes: list                # sentences the retarget plan reports about it

    KEYS = ("source_name", "source_matrix_world", "source_bone_lengths", "source_mapping_json", "source_tpose",
            "source_tpose_known", "source_tpose_words", "source_notes_json")

    @classmethod
    def from_arrays(cls, a):
        """The record of a database's arrays, or None when they hold none."""
        if not all(k in a for k in cls.KEYS):
            return None

        def text(key):
            return str(np.asarray(a[key])[()])

        return cls(name=text("source_name"), matrix_world=np.asarray(a["source_matrix_world"], dtype=np.float64),
                   bone_lengths=np.asarray(a["source_bone_lengths"], dtype=np.float64),
                   mapping=json.loads(text("source_mapping_json")),
                   tpose=np.asarray(a["source_tpose"], dtype=np.float64),
                   tpose_known=np.asarray(a["source_tpose_known"], dtype=bool),
                   tpose_words=text("source_tpose_words"), notes=list(json.loads(text("source_notes_json"))))

    def to_arrays(self):
        return {"source_name": np.array(self.name), "source_matrix_world": np.asarray(self.matrix_world, np.float64),
                "source_bone_lengths": np.asarray(self.bone_lengths, dtype=np.float64),
                "source_mapping_json": np.array(json.dumps(self.mapping, sort_keys=True)),
                "source_tpose": np.asarray(self.tpose, dtype=np.float64),
                "source_tpose_known": np.asarray(self.tpose_known, dtype=bool),
                "source_tpose_words": np.array(self.tpose_words), "source_notes_json": np.array(json.dumps(self.notes))}


@dataclass
class Poses:
    """Every row's pose-bone channels."""

    locations: np.ndarray  # (N, J, 3)
    rotations: np.ndarray  # (N, J, 4) quaternions w, x, y, z


@dataclass
class RootFrames:
    """The character frame of every row: on the ground, yaw 0 facing -Y."""

    positions: np.ndarray  # (N, 3)
    quats: np.ndarray      # (N, 4) w, x, y, z, yaw only
    facings: np.ndarray    # (N, 2) unit facing direction on the ground


@dataclass
class FeatureBones:
    """The bones the features and the bake name by role."""

    hips: str
    left_foot: str
    right_foot: str
    left_toe: str
    right_toe: str
    root: str

    def to_json(self):
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text):
        d = json.loads(text)
        return cls(**{f.name: str(d[f.name]) for f in fields(cls)})


@dataclass
class ClipInfo:
    """Where each clip came from, one entry per clip."""

    actions: list               # (C,) the action of each clip (a mirror image names the take it mirrors)
    armatures: list             # (C,) the armature that played it
    frame_starts: np.ndarray    # (C,) scene frame of each clip's first row
    mirrored: np.ndarray | None = None   # (C,) bool, True for mirror images; None: the file holds none

    def is_mirror(self, c):
        return self.mirrored is not None and bool(self.mirrored[c])


@dataclass
class MotionDatabase:
    """A checked database: the matching part and everything the bake plays."""

    matching: Database
    skeleton: Skeleton
    poses: Poses
    root: RootFrames
    toe_positions: np.ndarray    # (N, 2, 3) world left/right toe positions
    foot_positions: np.ndarray   # (N, 2, 3) world left/right ankle positions
    tags: list                   # (C,) lists of core Tags, 0-based clip frames
    clips: ClipInfo
    feature_bones: FeatureBones
    fingerprint: str             # hash of the inputs the database was built from
    source: SourceRecord | None = None   # the armature it was built from, when recorded

    @property
    def contacts(self):
        """(N, 2) left/right toe contacts."""
        return self.matching.contacts

    @property
    def contact_joints(self):
        """(left toe, right toe) the contacts were measured on."""
        return self.matching.contact_joints

    # ---- arrays

    @classmethod
    def from_arrays(cls, arrays):
        """The database of a dict of arrays (or an opened .npz), checked completely
        first; raises :class:`core.database.file_layout.DatabaseError` with a sentence
        naming the key."""
        checked, _sizes, _spec = check_arrays(arrays, complete=True)
        return cls._from_checked(checked)

    @classmethod
    def from_npz_bytes(cls, data):
        """The database of the bytes of a .npz file, checked completely (with the
        reader's caps on inflated size)."""
        arrays, _spec = read_database(bytes(data), complete=True)
        return cls._from_checked(arrays)

    @classmethod
    def _from_checked(cls, a):
        def text(key):
            return str(np.asarray(a[key])[()])

        def strings(key):
            return [str(s) for s in np.asarray(a[key]).reshape(-1)]

        return cls(
            matching=Database.from_arrays(a),
            skeleton=Skeleton(names=strings("bone_names"), parents=np.asarray(a["bone_parents"]),
                              rest=np.asarray(a["bone_rest"]), offsets=np.asarray(a["bone_offsets"])),
            poses=Poses(locations=np.asarray(a["pose_locations"]), rotations=np.asarray(a["pose_rotations"])),
            root=RootFrames(positions=np.asarray(a["root_positions"]), quats=np.asarray(a["root_quats"]),
                            facings=np.asarray(a["root_facings"])),
            toe_positions=np.asarray(a["toe_positions"]),
            foot_positions=np.asarray(a["foot_positions"]),
            tags=[[Tag(t["name"], t["start"], t["end"]) for t in clip] for clip in json.loads(text("tags_json"))],
            clips=ClipInfo(actions=strings("clip_actions"), armatures=strings("clip_armatures"),
                           frame_starts=np.asarray(a["clip_frame_start"]),
                           mirrored=np.asarray(a["clip_mirrored"]) if "clip_mirrored" in a else None),
            feature_bones=FeatureBones.from_json(text("feature_bones_json")),
            fingerprint=text("fingerprint"),
            source=SourceRecord.from_arrays(a),
        )

    def to_arrays(self):
        """Plain numpy arrays for ``np.savez``, in the file's key order and types;
        :meth:`from_arrays` reads them back."""
        spec = self.matching.spec
        out = self.matching.to_arrays()
        out.update({
            "format": np.array(ADDON_FORMAT),
            "weights": feature_weights(spec).astype(np.float64),
            "feature_names": np.array(feature_names(spec), dtype=np.str_),
            "bone_names": np.array(self.skeleton.names, dtype=np.str_),
            "bone_parents": np.asarray(self.skeleton.parents, dtype=np.int32),
            "bone_rest": np.asarray(self.skeleton.rest, dtype=np.float64),
            "bone_offsets": np.asarray(self.skeleton.offsets, dtype=np.float64),
            "feature_bones_json": np.array(self.feature_bones.to_json()),
            "pose_rotations": np.asarray(self.poses.rotations),
            "pose_locations": np.asarray(self.poses.locations),
            "root_positions": np.asarray(self.root.positions, dtype=np.float64),
            "root_facings": np.asarray(self.root.facings, dtype=np.float64),
            "root_quats": np.asarray(self.root.quats, dtype=np.float64),
            "toe_positions": np.asarray(self.toe_positions, dtype=np.float64),
            "foot_positions": np.asarray(self.foot_positions, dtype=np.float64),
            "clip_actions": np.array(self.clips.actions, dtype=np.str_),
            "clip_armatures": np.array(self.clips.armatures, dtype=np.str_),
            "clip_frame_start": np.asarray(self.clips.frame_starts, dtype=np.float64),
            "tags_json": np.array(json.dumps([[{"name": t.name, "start": t.start, "end": t.end} for t in clip]
                                              for clip in self.tags])),
            "fingerprint": np.array(self.fingerprint),
        })
        if self.clips.mirrored is not None:
            out["clip_mirrored"] = np.asarray(self.clips.mirrored, dtype=bool)
        if self.source is not None:
            out.update(self.source.to_arrays())
        return out

    def check(self):
        """Check the arrays :meth:`to_arrays` writes as loading them will (raises
        :class:`core.database.file_layout.DatabaseError` with a sentence)."""
        check_arrays(self.to_arrays(), complete=True)
