"""The bake's settings in Blender, made from ``core.bake.settings``.

Each knob of the stage dataclasses (``core.bake.settings.knobs``) becomes a
Blender property with its label, description, bounds and unit: on the scene
(``scene.motion_matching.bake_settings``, one flat group drawn by the Bake
panel's stage sub-panels and read by the bake and the live preview) and on the
bake operator, where an option given by a script overrides the scene's value.
:func:`to_core` is the one way back to a ``BakeSettings``; core-only fields
keep their defaults there (the benchmark changes them on the core settings).
"""

from dataclasses import dataclass

import bpy
from bpy.props import BoolProperty, FloatProperty, IntProperty

from ...core.bake.settings import BakeSettings, knobs, stage_classes

# How core's units show in Blender.
_UNITS = {
    "time": {"unit": "TIME_ABSOLUTE"},
    "length": {"unit": "LENGTH"},
    "velocity": {"unit": "VELOCITY"},
    "angle": {"subtype": "ANGLE"},
    "factor": {"subtype": "FACTOR"},
    None: {},
}


def property_names():
    """The Blender property name of every knob, in order."""
    return [k.name for k in knobs()]


def _property(k, options):
    kw = dict(name=k.label, description=k.description, default=k.default)
    if options is not None:
        kw["options"] = options
    if k.type is bool:
        return BoolProperty(**kw)
    for bound in ("min", "max", "soft_max"):
        if getattr(k, bound) is not None:
            kw[bound] = getattr(k, bound)
    if k.type is int:
        return IntProperty(**kw)
    return FloatProperty(**kw, **_UNITS[k.unit])


def properties(options=None):
    """{name: bpy.props definition} for every knob."""
    return {k.name: _property(k, options) for k in knobs()}


def with_knobs(options=None):
    """Class decorator: add a property per knob to a PropertyGroup or Operator
    (after its own properties)."""

    def add(cls):
        own = dict(cls.__dict__.get("__annotations__", {}))
        own.update(properties(options))
        cls.__annotations__ = own
        return cls

    return add


def to_core(settings, operator=None):
    """``BakeSettings`` from a property group with the knobs (the scene's); an
    option ``operator`` was given explicitly takes precedence."""
    values = {}
    for k in knobs():
        source = settings
        if operator is not None and operator.properties.is_property_set(k.name):
            source = operator
        values[k.name] = getattr(source, k.name)
    return BakeSettings.of(**values)


@dataclass(frozen=True)
class Stage:
    """How the Bake panel shows one stage: its label, its enable switch's property
    (None: always on), the properties shown, those in its Advanced sub-panel."""

    name: str
    label: str
    switch: str
    shown: tuple
    advanced: tuple


def stages():
    """The stages that have knobs, in the bake's order (:class:`Stage`)."""
    out = []
    for name, cls in stage_classes().items():
        own = [k for k in knobs() if k.stage == name]
        if not own:
            continue
        switch = next((k.name for k in own if k.is_switch), None)
        out.append(Stage(name, cls.LABEL, switch, tuple(k.name for k in own if not k.is_switch and not k.advanced),
                         tuple(k.name for k in own if k.advanced)))
    return out


def fill_unset(operator, settings):
    """Give an operator's knobs that were not set the scene's values (so its
    redo panel shows what it baked with)."""
    for name in property_names():
        if not operator.properties.is_property_set(name):
            setattr(operator, name, getattr(settings, name))


@with_knobs()
class MOTION_MATCHING_PG_bake_settings(bpy.types.PropertyGroup):
    """The scene's bake settings: what Bake and the live preview use."""


classes = (MOTION_MATCHING_PG_bake_settings,)
