"""Where the shipped sample take lives, and the real CMU clips the tests use."""

import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = os.path.join(REPO, "samples")
SAMPLE_TAKE = os.path.join(SAMPLES, "jl_mm_run.bvh")
SAMPLE_TPOSE = os.path.join(SAMPLES, "jl_mm_tpose.bvh")
CMU_DIR = os.path.join(REPO, "tests", "data", "cmu")     # three CMU clips, their terms in its README.md
