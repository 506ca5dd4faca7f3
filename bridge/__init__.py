"""The Blender side of the data, in packages named like the jobs of operators/
and panels/: blender (what every job shares: compat, bulk animation, the
property groups that stand alone), files (import, virtual root, export),
retarget, database, bake, preview; each imports only those before it in that
list. Imports core and itself only."""
