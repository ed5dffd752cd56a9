# Helpers shared by every stage: config validation, data location, the study's objects and the
# file names of the grid (paths under results/ are the contract between stages).
import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from ipcgrasp.baselines import MODELS
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import list_objects
from ipcgrasp.data.registry import load_registry
from ipcgrasp.study.cube import value_label
from ipcgrasp.study.runs import ALWAYS_SUCCESS
from ipcgrasp.study.split import object_split

validate(config, schema="../schemas/config.schema.yaml")

# The notebook directive calls `papermill`: put the running environment's bin/ first on PATH, so
# it is found when snakemake is started as .venv/bin/snakemake without activating the venv.
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])

DATA_DIR = resolve_data_dir(config.get("data_dir") or None)
REGISTRY = config["registry"]
SEED = config["seed"]
TRIALS = config["trials"]
SIM = config["sim"]
CALIBRATION = config["calibration"]
GRID = config["grid"]
EVALUATION = config["evaluation"]

OBJECTS = sorted(config["objects"]) or list_objects(DATA_DIR)
_missing = sorted(set(OBJECTS) - set(list_objects(DATA_DIR)))
if _missing:
    raise WorkflowError(f"config objects {_missing} lack a mesh or physical grasps in {DATA_DIR}")
TRAINING_OBJECTS, HELDOUT_OBJECTS = object_split(OBJECTS, load_registry(REGISTRY))

# grid values as they appear in file names (1e8, 0.4) and back
E_LABELS = [value_label(E) for E in GRID["E"]]
MU_LABELS = [value_label(mu) for mu in GRID["mu"]]
CALIBRATION_E = sorted(set(GRID["E"]) | {CALIBRATION["E_ref"]})
FACTOR_LABELS = [value_label(f) for f in CALIBRATION["sensitivity_factors"]]

_unknown_models = sorted(set(EVALUATION["models"]) - set(MODELS))
if _unknown_models:
    raise WorkflowError(f"evaluation.models: {_unknown_models} are not in ipcgrasp.baselines.MODELS ({list(MODELS)})")
EVALUATION_MODELS = list(EVALUATION["models"]) + [ALWAYS_SUCCESS]


wildcard_constraints:
    jaw="|".join(["rounded", "rectangular"]),
    rule="psi|force",
    E=r"[0-9.]+(e-?[0-9]+)?",
    mu=r"[0-9.]+(e-?[0-9]+)?",
    factor=r"[0-9.]+(e-?[0-9]+)?",
    subdivisions=r"\d+",
    object="|".join(OBJECTS),
    model="|".join(EVALUATION_MODELS),


def object_data(wildcards):
    """The object's mesh and physical grasps: a cell reruns when its data changes."""
    return [DATA_DIR / "object_meshes" / f"{wildcards.object}.obj",
            DATA_DIR / "phys_grasps_json" / f"{wildcards.object}.json"]


def grid_cells(jaw):
    return expand("results/grid/{jaw}/{rule}/E{E}_mu{mu}/{object}.nc", jaw=jaw, rule=GRID["rules"],
                  E=E_LABELS, mu=MU_LABELS, object=TRAINING_OBJECTS)


F1_TABLE = "results/grid/f1_{jaw}_{rule}.{ext}"


def grid_tables():
    return expand(F1_TABLE, jaw=GRID["jaws"], rule=GRID["rules"], ext=["csv", "md"])


def sensitivity_outputs():
    if not FACTOR_LABELS:
        return []
    return ["results/calibration/sensitivity.nc", "results/calibration/sensitivity.csv",
            "results/calibration/sensitivity.md"]
