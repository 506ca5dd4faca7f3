"""The matching database: one normalised, weighted row per frame of every clip.

Search compares a query against these rows (:mod:`core.database.search`); the
rows are built from clips (:mod:`core.database.clip_features`) with the feature
set (:mod:`core.database.feature_spec`) and normalised
(:mod:`core.database.normalization`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..skeleton.contacts import CONTACT_FILTER_S, foot_contacts
from .clip_features import check_clip, clip_valid_rows, joint_index, unchecked_clip_features
from .feature_spec import FeatureError, FeatureSpec, feature_weights
from .normalization import Normalization, compute_normalization, normalize

__all__ = ["DATABASE_FORMAT_VERSION", "Database", "build_database", "query_features", "reweight"]

DATABASE_FORMAT_VERSION = 1


@dataclass
class Database:
    """Every frame of every clip as one row, clips one after another.

    ``features`` (N, D) float32 normalised and weighted (search compares these);
    ``raw`` (N, D) float64 unnormalised; ``clip_index`` / ``frame_index`` (N,) where
    each row comes from (frame 0-based in its clip); ``valid`` (N,) rows that may be
    offered (away from clip ends and not excluded); ``excluded`` (N,) the clips'
    exclusion flags; ``contacts`` (N, 2) left/right toe contacts or None;
    ``clip_offsets`` (C + 1,) first row of each clip, then N.
    """

    spec: FeatureSpec
    norm: Normalization
    features: np.ndarray
    raw: np.ndarray
    clip_index: np.ndarray
    frame_index: np.ndarray
    valid: np.ndarray
    excluded: np.ndarray
    clip_names: list
    clip_fps: np.ndarray
    clip_offsets: np.ndarray
    contacts: np.ndarray | None = None
    contact_joints: tuple | None = None

    @property
    def num_rows(self):
        return int(self.features.shape[0])

    @property
    def dim(self):
        return int(self.features.shape[1])

    def row(self, clip, frame):
        """Row index of ``frame`` (0-based) of clip number ``clip``."""
        return int(self.clip_offsets[clip]) + int(frame)

    def clip_rows(self, clip):
        return slice(int(self.clip_offsets[clip]), int(self.clip_offsets[clip + 1]))

    def to_arrays(self):
        """Plain numpy arrays (no objects) for ``np.savez``; the spec is a JSON string
        in a 0-d unicode array. Read back with ``np.load(..., allow_pickle=False)``
        and :meth:`from_arrays`."""
        out = {
            "format_version": np.array(DATABASE_FORMAT_VERSION, dtype=np.int64),
            "spec_json": np.array(self.spec.to_json()),
            "features": np.asarray(self.features, dtype=np.float32),
            "raw": np.asarray(self.raw, dtype=np.float64),
            "norm_mean": np.asarray(self.norm.mean, dtype=np.float64),
            "norm_scale": np.asarray(self.norm.scale, dtype=np.float64),
            "clip_index": np.asarray(self.clip_index, dtype=np.int32),
            "frame_index": np.asarray(self.frame_index, dtype=np.int32),
            "valid": np.asarray(self.valid, dtype=bool),
            "excluded": np.asarray(self.excluded, dtype=bool),
            "clip_names": np.array([str(n) for n in self.clip_names], dtype=np.str_),
            "clip_fps": np.asarray(self.clip_fps, dtype=np.float64),
            "clip_offsets": np.asarray(self.clip_offsets, dtype=np.int64),
        }
        if self.contacts is not None:
            out["contacts"] = np.asarray(self.contacts, dtype=bool)
            out["contact_joints"] = np.array([str(j) for j in self.contact_joints], dtype=np.str_)
        return out

    @classmethod
    def from_arrays(cls, arrays):
        """Inverse of :meth:`to_arrays`; accepts a dict or an opened ``.npz``.

        The arrays are taken as they are: arrays from a file are checked first with
        :func:`core.database.checks.database_from_arrays` (which then calls this)."""
        spec = FeatureSpec.from_json(str(np.asarray(arrays["spec_json"])[()]))
        keys = set(arrays.keys())
        db = cls(
            spec=spec,
            norm=Normalization(mean=np.asarray(arrays["norm_mean"], dtype=np.float64),
                               scale=np.asarray(arrays["norm_scale"], dtype=np.float64)),
            features=np.asarray(arrays["features"], dtype=np.float32),
            raw=np.asarray(arrays["raw"], dtype=np.float64),
            clip_index=np.asarray(arrays["clip_index"], dtype=np.int32),
            frame_index=np.asarray(arrays["frame_index"], dtype=np.int32),
            valid=np.asarray(arrays["valid"], dtype=bool),
            excluded=np.asarray(arrays["excluded"], dtype=bool),
            clip_names=[str(s) for s in np.asarray(arrays["clip_names"]).reshape(-1)],
            clip_fps=np.asarray(arrays["clip_fps"], dtype=np.float64),
            clip_offsets=np.asarray(arrays["clip_offsets"], dtype=np.int64),
        )
        if "contacts" in keys:
            db.contacts = np.asarray(arrays["contacts"], dtype=bool)
            db.contact_joints = tuple(str(s) for s in np.asarray(arrays["contact_joints"]).reshape(-1))
        return db


def build_database(spec, clips, contact_joints=None, contact_speed=0.15, contact_filter=CONTACT_FILTER_S):
    """Features of all ``clips`` stacked into one normalised :class:`Database`.

    ``contact_joints`` is ``(left_toe, right_toe)`` or None (no contacts stored).
    Normalisation statistics use every row that is not excluded, including the rows
    near clip ends that are not offered (their clamped trajectories shift the
    statistics only slightly, and every genuine pose counts).
    """
    spec.validate()
    clips = list(clips)
    if not clips:
        raise FeatureError("There are no clips to build the database from; add at least one action.")
    extra = tuple(contact_joints) if contact_joints is not None else ()
    if contact_joints is not None and len(extra) != 2:
        raise FeatureError("Foot contacts need exactly two joints: the left toe and the right toe.")
    raws, kept, valids, contacts = [], [], [], []
    for clip in clips:
        check_clip(spec, clip, extra_joints=extra)
        raws.append(unchecked_clip_features(spec, clip))
        n = clip.num_frames
        excl = (np.zeros(n, dtype=bool) if clip.excluded is None
                else np.asarray(clip.excluded, dtype=bool))
        kept.append(~excl)
        valids.append(clip_valid_rows(spec, n, clip.fps) & ~excl)
        if contact_joints is not None:
            index = joint_index(clip)
            toes = np.asarray(clip.positions, dtype=np.float64)[:, [index[j] for j in extra]]
            contacts.append(foot_contacts(toes, clip.fps, contact_speed, contact_filter))
    if not any(k.any() for k in kept):
        raise FeatureError(
            "Every frame of every clip is excluded, so the database would have nothing to offer.")
    valid = np.concatenate(valids)
    if not valid.any():
        raise FeatureError(
            "No frame can be offered as a search result: every clip is shorter than the "
            f"{spec.effective_end_margin_s() + spec.effective_start_margin_s():.2f} s the "
            "feature set needs around a frame, or the remaining frames are excluded.")
    norm = compute_normalization(raws, kept, spec)
    raw = np.concatenate(raws, axis=0)
    lengths = np.array([r.shape[0] for r in raws])
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    clip_index = np.repeat(np.arange(len(clips), dtype=np.int32), lengths)
    frame_index = (np.arange(offsets[-1]) - np.repeat(offsets[:-1], lengths)).astype(np.int32)
    return Database(
        spec=spec,
        norm=norm,
        features=normalize(raw, norm, feature_weights(spec)).astype(np.float32),
        raw=raw,
        clip_index=clip_index,
        frame_index=frame_index,
        valid=valid,
        excluded=~np.concatenate(kept),
        clip_names=[c.name for c in clips],
        clip_fps=np.array([float(c.fps) for c in clips]),
        clip_offsets=offsets,
        contacts=np.concatenate(contacts, axis=0) if contact_joints is not None else None,
        contact_joints=extra if contact_joints is not None else None,
    )


def query_features(db, raw_query):
    """Normalise a raw query (D,) (or (K, D)) exactly as the database rows were:
    same mean, scale and weights. Returns float64."""
    q = np.asarray(raw_query, dtype=np.float64)
    if q.shape[-1:] != (db.dim,) or q.ndim > 2:
        raise FeatureError(
            f"The query has shape {q.shape}; the database has {db.dim} feature columns.")
    if not np.isfinite(q).all():
        raise FeatureError("The query contains NaN or infinite values.")
    return normalize(q, db.norm, feature_weights(db.spec))


def reweight(db, spec):
    """A copy of ``db`` whose features use the weights, responsiveness and quality of
    ``spec``; the rest of ``spec`` must match the database's (same groups, kinds,
    bones, times and margins), otherwise the database must be rebuilt."""
    spec.validate()

    def layout(s):
        return ([(g.name, g.kind, list(g.bones) if not g.is_trajectory else [],
                  [float(t) for t in g.times_s] if g.is_trajectory else []) for g in s.groups],
                s.effective_end_margin_s(), s.effective_start_margin_s())

    if layout(spec) != layout(db.spec):
        raise FeatureError(
            "The feature set changed more than its weights (groups, bones, times or margins); "
            "rebuild the database.")
    features = normalize(db.raw, db.norm, feature_weights(spec)).astype(np.float32)
    return Database(**{**db.__dict__, "spec": spec, "features": features})

