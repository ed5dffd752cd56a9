# Helpers shared by every stage: config validation, data location, the study's objects, the
# models, and the file names of the grid and the baseline sweeps (paths under results/ are the
# contract between stages).
import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

# ipcgrasp's modules imported here load neither scipy.stats, xarray, trimesh nor numba: every snakemake
# process parses this file, each cluster job's own and every dry run's (test_dag.py checks).
from ipcgrasp.baselines import MODELS
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import list_objects
from ipcgrasp.data.registry import load_registry
from ipcgrasp.documents import DocumentError, load_yaml
from ipcgrasp.study.config import ConfigError, check_config, check_data_gripper
from ipcgrasp.study.labels import ALWAYS_SUCCESS, value_label
from ipcgrasp.study.split import object_split
from ipcgrasp.study.sweeps import SWEEP_MODELS, sweep_settings

try:  # snakemake's own reader keeps a repeated key's last value and expands aliases without bound
    for _configfile in workflow.configfiles:
        load_yaml(_configfile)
except DocumentError as exc:
    raise WorkflowError(f"config file {exc}") from None
validate(config, schema="../schemas/config.schema.yaml")
try:
    check_config(config)  # NaN (which JSON schema lets through) and SimParams' own rules, by key path
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None

# The notebook directive calls `papermill`: put the running environment's bin/ first on PATH, so
# it is found when snakemake is started as .venv/bin/snakemake without activating the venv.
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])

DATA_DIR = resolve_data_dir(config.get("data_dir") or None)
try:
    check_data_gripper(config, DATA_DIR)  # own trials recorded with another gripper than the config's
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None
REGISTRY = config["registry"]
SEED = config["seed"]
TRIALS = config["trials"]
SIM = config["sim"]
GRIPPER = config["gripper"]  # a shipped description's name or a description file (docs/grippers.md)
CALIBRATION = config["calibration"]
GRID = config["grid"]
EVALUATION = config["evaluation"]
FINGERS = config["fingers"]
BASELINES = config["baselines"]

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
# the compliant-finger sweep: at grid values only (the grid's cells are its rigid fingers)
for _key in ("E", "mu"):
    _outside = sorted(set(FINGERS[_key]) - set(GRID[_key]))
    if _outside:
        raise WorkflowError(f"fingers.{_key}: {_outside} are not in grid.{_key} {GRID[_key]}; the sweep compares with "
                            f"the grid's rigid fingers at the same values: add them to grid.{_key} or remove them")
FINGER_LABELS = [value_label(k) for k in FINGERS["stiffness"]]
FINGER_E_LABELS = [value_label(E) for E in FINGERS["E"] or GRID["E"]]
FINGER_MU_LABELS = [value_label(mu) for mu in FINGERS["mu"] or GRID["mu"]]

_unknown_models = sorted(set(EVALUATION["models"]) - set(MODELS))
if _unknown_models:
    raise WorkflowError(f"evaluation.models: {_unknown_models} are not in ipcgrasp.baselines.MODELS ({list(MODELS)})")
EVALUATION_MODELS = list(EVALUATION["models"]) + [ALWAYS_SUCCESS]
# dynamic baselines: a contact-parameter sweep on the training grasps, then submitted evaluation jobs
SWEPT_MODELS = [m for m in EVALUATION_MODELS if m in SWEEP_MODELS]
# the rest predict in well under a second per trial: evaluated in the main snakemake process
QUICK_MODELS = [m for m in EVALUATION_MODELS if m not in SWEPT_MODELS]
PARTS = list(range(EVALUATION["parts"]))  # held-out jobs per object of the simulator and each dynamic baseline


def one_of(names):
    """A wildcard constraint matching exactly these names (none: matches nothing)."""
    return "|".join(names) if names else "(?!)"


wildcard_constraints:
    jaw=one_of(sorted({*GRID["jaws"], CALIBRATION["jaw"]})),
    rule="psi|force",
    E=r"[0-9.]+(e-?[0-9]+)?",
    mu=r"[0-9.]+(e-?[0-9]+)?",
    factor=r"[0-9.]+(e-?[0-9]+)?",
    stiffness=r"[0-9.]+(e-?[0-9]+)?",
    margin=r"[0-9.]+(e-?[0-9]+)?",
    subdivisions=r"\d+",
    object="|".join(OBJECTS),
    model=one_of(EVALUATION_MODELS),
    part=r"\d+",


def object_data(wildcards):
    """The object's mesh and physical grasps: a cell reruns when its data changes."""
    return [DATA_DIR / "object_meshes" / f"{wildcards.object}.obj",
            DATA_DIR / "phys_grasps_json" / f"{wildcards.object}.json"]


# Job priorities (of the jobs ready to run, snakemake starts those of highest priority first). The
# grid's rows go before the Psi_th sensitivity and the resolution benchmark, which then fill the
# cores while the last rows finish (the baselines wait for the grid's best setting). After the
# grid, the MuJoCo baseline's jobs go first: its sweep and then its held-out jobs are the longest
# chain (about 3 min a job), and the shorter jobs then fill the cores to the end.
GRID_PRIORITY = 1
LONG_CHAIN_MODELS = ("mujoco_flex",)


def chain_priority(wildcards):
    """The priority of a dynamic baseline's sweep and held-out jobs: 1 on the longest chain."""
    return 1 if wildcards.model in LONG_CHAIN_MODELS else 0


GRID_CELL = "results/grid/{jaw}/{rule}/E{E}_mu{mu}/{object}.nc"


def grid_cells(jaw):
    return expand(GRID_CELL, jaw=jaw, rule=GRID["rules"], E=E_LABELS, mu=MU_LABELS, object=TRAINING_OBJECTS)


FINGER_CELL = "results/fingers/{jaw}/{rule}/k{stiffness}_E{E}_mu{mu}/{object}.nc"


def finger_cells(jaw):
    """The compliant cells of one jaw's finger sweep and the grid's rigid cells at the same values."""
    compliant = expand(FINGER_CELL, jaw=jaw, rule=GRID["rules"], stiffness=FINGER_LABELS, E=FINGER_E_LABELS,
                       mu=FINGER_MU_LABELS, object=TRAINING_OBJECTS)
    rigid = expand(GRID_CELL, jaw=jaw, rule=GRID["rules"], E=FINGER_E_LABELS, mu=FINGER_MU_LABELS,
                   object=TRAINING_OBJECTS)
    return {"compliant": compliant, "rigid": rigid}


def finger_outputs():
    """The finger sweep's outputs; none while fingers.stiffness is empty."""
    if not FINGER_LABELS:
        return []
    return [*expand("results/fingers/{jaw}.nc", jaw=GRID["jaws"]), "results/fingers/scores.csv",
            "results/fingers/scores.md"]


F1_TABLE = "results/grid/f1_{jaw}_{rule}.{ext}"


def grid_tables():
    return expand(F1_TABLE, jaw=GRID["jaws"], rule=GRID["rules"], ext=["csv", "md"])


def sensitivity_outputs():
    if not FACTOR_LABELS:
        return []
    return ["results/calibration/sensitivity.nc", "results/calibration/sensitivity.csv",
            "results/calibration/sensitivity.md"]


def training_data(wildcards=None):
    """Meshes and physical grasps of every training object: a sweep job reruns when they change."""
    return [DATA_DIR / sub / f"{name}.{ext}" for name in TRAINING_OBJECTS
            for sub, ext in (("object_meshes", "obj"), ("phys_grasps_json", "json"))]


SWEEP_CELL = "results/baselines/{model}/stiffness{stiffness}_margin{margin}.nc"


def sweep_cells(model):
    return expand(SWEEP_CELL, model=model, stiffness=[value_label(k) for k in BASELINES[model]["stiffness"]],
                  margin=[value_label(r) for r in BASELINES[model]["margin"]])


def sweep_cell_settings(wildcards):
    """The model's settings at one grid point (study.sweeps.sweep_settings)."""
    return sweep_settings(wildcards.model, float(wildcards.stiffness), float(wildcards.margin),
                          BASELINES[wildcards.model])


def sweep_outputs():
    return (expand("results/baselines/{model}{suffix}", model=SWEPT_MODELS, suffix=[".nc", "/best.json"])
            + expand("results/baselines/{model}/{table}.{ext}", model=SWEPT_MODELS, table=["f1", "sensitivity"],
                     ext=["csv", "md"]))
