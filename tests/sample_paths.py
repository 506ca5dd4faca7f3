"""Where the shipped sample take lives."""

import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = os.path.join(REPO, "samples")
SAMPLE_TAKE = os.path.join(SAMPLES, "jl_mm_run.bvh")
SAMPLE_TPOSE = os.path.join(SAMPLES, "jl_mm_tpose.bvh")
