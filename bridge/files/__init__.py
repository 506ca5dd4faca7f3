"""A take in and a bake out: the BVH import (import_bvh) and the virtual root a
take is given (virtual_root), the baked export (export_baked)."""
