"""The bake: the controller it follows (controller), one bake (bake, bake_job)
and a crowd of them (crowd)."""
