"""Every panel's poll and draw run against a recording stand-in for layout;
every property path drawn and every operator named must exist."""

import bpy
import pytest

import bl_helpers as H


class Recorder:
    """Stands in for UILayout: records what is drawn, returns itself for sub-layouts."""

    def __init__(self, log):
        self._log = log

    def __getattr__(self, name):
        def method(*args, **kwargs):
            self._log.append((name, args, kwargs))
            if name == "operator":
                return OperatorProps(args[0] if args else kwargs.get("operator"), self._log)
            return Recorder(self._log)

        return method

    def __setattr__(self, name, value):
        if name == "_log":
            object.__setattr__(self, name, value)


class OperatorProps:
    def __init__(self, idname, log):
        object.__setattr__(self, "idname", idname)
        object.__setattr__(self, "_log", log)

    def __setattr__(self, name, value):
        self._log.append(("operator_prop", (self.idname, name), {}))


def _stand_in(cls, log):
    """An object to call a panel's draw with: its class attributes and a recording layout."""
    return type("PanelStandIn", (), {"layout": Recorder(log), "bl_label": cls.bl_label,
                                     "stage": getattr(cls, "stage", None),
                                     "advanced": getattr(cls, "advanced", False)})()


def _our_panels():
    return [cls for cls in bpy.types.Panel.__subclasses__() if cls.__name__.startswith("MOTION_MATCHING_PT_")]


def _check(log):
    for kind, args, kwargs in log:
        if kind in ("prop", "prop_search"):
            data, prop = args[0], args[1]
            assert prop in data.bl_rna.properties, "%s has no property %s" % (data, prop)
        elif kind == "operator":
            idname = args[0]
            module, name = idname.split(".")
            assert hasattr(bpy.types, "%s_OT_%s" % (module.upper(), name)), idname
        elif kind == "operator_prop":
            idname, prop = args
            module, name = idname.split(".")
            props = getattr(getattr(bpy.ops, module), name).get_rna_type().properties
            assert prop in props, (idname, prop)
        elif kind == "template_list":
            listtype, _listid, data, prop, active_data, active_prop = args[:6]
            assert hasattr(bpy.types, listtype), listtype
            assert prop in data.bl_rna.properties and active_prop in active_data.bl_rna.properties, args


def test_every_panel_polls_and_draws(tmp_path, take_on_path):
    obj, _ctrl = take_on_path()
    scene = bpy.context.scene
    t = obj.animation_data.action.motion_matching.tags.add()
    t.name, t.frame_start, t.frame_end = "walk", 10, 200
    assert bpy.ops.motion_matching.import_dance_card(
        filepath=H.addon_module("bridge").__file__.rsplit("/", 2)[0] + "/samples/jl_mm_dance_card.toml"
    ) == {"FINISHED"}
    scene.frame_end = 60
    assert bpy.ops.motion_matching.bake() == {"FINISHED"}
    bpy.context.view_layer.objects.active = obj
    panels = _our_panels()
    assert len(panels) >= 7
    drawn = 0
    for cls in panels:
        if hasattr(cls, "poll") and not cls.poll(bpy.context):
            continue
        log = []
        stand_in = _stand_in(cls, log)
        cls.draw(stand_in, bpy.context)
        if hasattr(cls, "draw_header"):
            cls.draw_header(stand_in, bpy.context)
        _check(log)
        drawn += 1
    assert drawn == len(panels), "every panel applies in this scene"


def test_a_typo_is_caught():
    log = [("prop", (bpy.context.scene.motion_matching, "respnsiveness"), {})]
    with pytest.raises(AssertionError):
        _check(log)
    with pytest.raises(AssertionError):
        _check([("operator", ("motion_matching.bakee",), {})])
    with pytest.raises(AssertionError):
        _check([("operator_prop", ("motion_matching.export_baked", "fromat"), {})])
    _check([("operator_prop", ("motion_matching.export_baked", "format"), {})])


def _shown(root):
    """[(panel, property)] drawn by ``root`` and its sub-panels that are open by
    default (headers included), in drawing order."""
    panels = _our_panels()
    out = []

    def walk(cls):
        if "DEFAULT_CLOSED" in getattr(cls, "bl_options", set()):
            return
        log = []
        stand_in = _stand_in(cls, log)
        if hasattr(cls, "draw_header"):
            cls.draw_header(stand_in, bpy.context)
        cls.draw(stand_in, bpy.context)
        _check(log)
        out.extend((cls.bl_idname, args[1]) for kind, args, _kw in log if kind in ("prop", "prop_search"))
        for child in panels:
            if getattr(child, "bl_parent_id", None) == cls.bl_idname:
                walk(child)

    walk(root)
    return out


def test_the_bake_panel_shows_a_few_settings_grouped_by_stage(take_on_path):
    take_on_path()
    bake_panel = next(cls for cls in _our_panels() if cls.bl_idname == "MOTION_MATCHING_PT_bake")
    shown = _shown(bake_panel)
    names = [prop for _panel, prop in shown]
    # A dozen at most besides Ground (an object input, like the controller, that the bake needs only on uneven ground).
    assert len([n for n in names if n != "ground"]) <= 12, names
    assert len(set(names)) == len(names), names
    assert {"controller", "bake_armature", "ground", "tag_query"} <= set(names)
    # Every stage that can be off shows its switch in its sub-panel's header.
    props = H.addon_module("bridge.blender.bake_settings")
    for stage in props.stages():
        panel = "MOTION_MATCHING_PT_bake_" + stage.name
        if stage.switch:
            assert (panel, stage.switch) in shown, stage.name
            assert shown.index((panel, stage.switch)) == min(i for i, (p, _n) in enumerate(shown) if p == panel)
        # The advanced settings are in a closed sub-panel of the stage, and only there.
        for name in stage.advanced:
            assert name not in names, name
        if stage.advanced:
            adv = next(cls for cls in _our_panels() if cls.bl_idname == panel + "_advanced")
            assert adv.bl_parent_id == panel and "DEFAULT_CLOSED" in adv.bl_options
    assert set(props.property_names()) - set(names) == {n for s in props.stages() for n in s.advanced}
    # The old-behaviour switches the benchmark uses are no scene setting.
    group = bpy.context.scene.motion_matching.bake_settings.bl_rna.properties
    for gone in ("lock_on_contact", "strict_tag_query", "planted_adjustment", "release_in_joints"):
        assert gone not in group, gone


def _report_labels():
    log = []
    cls = bpy.types.MOTION_MATCHING_PT_report
    stand_in = type("PanelStandIn", (), {"layout": Recorder(log), "bl_label": cls.bl_label})()
    cls.draw(stand_in, bpy.context)
    return [kwargs.get("text") for kind, _args, kwargs in log if kind == "label"]


def test_the_report_panel_draws_one_shape():
    """A stored report that lacks the planted figures (a rig without leg chains,
    or an older report) draws the same lines, with '-' for what was not measured."""
    mm = bpy.context.scene.motion_matching
    mm.last_bake_report = '{"frames": 3, "searches": 1, "jumps": 0, "warnings": ["Look here."]}'
    labels = _report_labels()
    assert "Planted sliding: - cm/foot/s (take -, -x)" in labels and "Look here." in labels
    mm.last_bake_report = ('{"frames": 3, "contact_sliding_cm_per_foot_per_moving_s": 1.25, '
                           '"raw_contact_sliding_cm_per_foot_per_moving_s": 2.5, "contact_sliding_ratio": 0.5}')
    full = _report_labels()
    assert "Planted sliding: 1.2 cm/foot/s (take 2.5, 0.50x)" in full and len(full) == len(labels) - 1
    mm.last_bake_report = "[1, 2]"
    assert _report_labels() == ["The last report cannot be read."]
    mm.last_bake_report = ""


def _long_tooltips(owner, rna, seen, out):
    """(owner, property, words) of ``rna``'s properties whose tooltip runs past 20 words, through
    the add-on's own nested property groups."""
    if rna.identifier in seen:
        return
    seen.add(rna.identifier)
    for prop in rna.properties:
        if prop.identifier == "rna_type" or prop.identifier.startswith("bl_"):
            continue
        words = len((prop.description or "").split())
        if words > 20:
            out.append((owner, prop.identifier, words))
        fixed = getattr(prop, "fixed_type", None)
        if prop.type in ("POINTER", "COLLECTION") and fixed is not None \
                and fixed.identifier.lower().startswith(("motionmatching", "motion_matching")):
            _long_tooltips(owner + "." + prop.identifier, fixed, seen, out)


def test_every_tooltip_is_at_most_20_words():
    """Operators (their description and options) and the settings on the scene, armatures, actions
    and objects: an animator reads each tooltip in one glance."""
    seen, long = set(), []
    operators = [name for name in dir(bpy.types) if name.startswith("MOTION_MATCHING_OT_")]
    assert len(operators) > 20
    for name in operators:
        cls = getattr(bpy.types, name)
        words = len((cls.__doc__ or "").split())
        if words > 20:
            long.append((name, "description", words))
        op = getattr(bpy.ops.motion_matching, cls.bl_idname.split(".", 1)[1])
        _long_tooltips(name, op.get_rna_type(), seen, long)
    owners = (bpy.context.scene, bpy.data.armatures.new("TooltipProbe"), bpy.data.actions.new("TooltipProbe"),
              bpy.data.objects.new("TooltipProbe", None))
    groups = [o.motion_matching for o in owners if getattr(o, "motion_matching", None) is not None]
    assert len(groups) >= 3
    for group in groups:
        _long_tooltips(group.bl_rna.identifier, group.bl_rna, seen, long)
    assert not long, long
