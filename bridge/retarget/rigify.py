"""Rigify: limbs whose FK controls got keys switched to FK."""


def switch_to_fk(obj, keyed, backup):
    """Rigify limbs whose FK controls got keys: set their IK_FK switch
    (a custom property on '<limb>_parent.<side>') to FK."""
    keyed = set(keyed)
    switched = []
    for pb in obj.pose.bones:
        if "IK_FK" in pb.keys() and "_parent" in pb.name and pb.name.replace("_parent", "_fk") in keyed:
            backup.props.append((pb.name, "IK_FK", pb["IK_FK"]))
            pb["IK_FK"] = 1.0
            switched.append(pb.name)
    return switched
