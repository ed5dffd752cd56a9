"""Bad input is named before any work starts (issue 15): through the public API, the command line
(a process of its own) and `snakemake -n` on bad configs (in a copy of the repository). Each case
asserts the exception type or exit code and that the message names the field or file and the fix.
No case runs a simulation."""

import math
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import trimesh
import xarray as xr
import yaml

from ipcgrasp import GraspObject, SimParams, robustness, simulate_grasp
from ipcgrasp.cli import main
from ipcgrasp.geometry.mesh import MeshError
from ipcgrasp.grasp.description import load_description
from ipcgrasp.grasp.params import SimParamsError
from ipcgrasp.grasp.pose import PoseError
from ipcgrasp.grasp.trajectory import PHASES
from ipcgrasp.io import write_json_atomic

from .conftest import ForkServer, reach_data
from .workflow.conftest import dry_run

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def cube(mass=0.01) -> GraspObject:
    return GraspObject.from_mesh(trimesh.creation.box(extents=(0.03, 0.03, 0.03)), mass, "cube")


def scaled(factor):
    pose = np.eye(4)
    pose[:3, :3] *= factor
    return pose


# ---------------------------------------------------------------- API: SimParams (item 1)

SIM_PARAMS = {
    "zero time step": ({"dt": 0.0}, "dt", r"\(0, 0.1\] s"),
    "NaN time step": ({"dt": math.nan}, "dt", "finite"),
    "infinite E": ({"E": math.inf}, "E", r"\[100000, 1e\+12\] Pa"),
    "E as text": ({"E": "1e8"}, "E", "not text"),
    "friction as a bool": ({"mu": True}, "mu", "not text or true/false"),
    "negative friction": ({"mu": -0.1}, "mu", r"\[0, 5\]"),
    "incompressible pads": ({"nu": 0.5}, "nu", r"\[0, 0.5\)"),
    "fractional Newton budget": ({"newton_budget": 2.5}, "newton_budget", "an integer"),
    "infinite closing speed": ({"closing_speed": math.inf}, "closing_speed", "or None"),
    "malformed jaw": ({"jaw": "Square pad"}, "jaw", "rounded"),
    "critical mass as 1": ({"critical_mass": 1}, "critical_mass", "true or false"),
    "shake reaching the ground": ({"shake_amplitude": 0.02}, "shake_amplitude", "below lift_height"),
    "shake faster than the time step": ({"shake_amplitude": 0.005, "shake_frequency": 10.0}, "shake_frequency",
                                        "fewer than 8 time steps"),
}


@pytest.mark.parametrize("case", SIM_PARAMS)
def test_sim_params(case):
    values, field, problem = SIM_PARAMS[case]
    with pytest.raises(SimParamsError, match=rf"SimParams\.{field}\b.*{problem}") as info:
        SimParams(**values)
    assert info.value.field == field and "fix" in str(info.value)


# ---------------------------------------------------------------- API: poses (item 2) and trials (item 6)

POSES = {
    "scaled grasp pose": ("grasp_pose", scaled(1.1), "not a rigid transform: rotation part"),
    "mirrored grasp pose": ("grasp_pose", np.diag([1.0, -1.0, 1.0, 1.0]), "det -1"),
    "NaN in grasp pose": ("grasp_pose", np.full((4, 4), np.nan), "non-finite"),
    "3x3 grasp pose": ("grasp_pose", np.eye(3), r"shape \(3, 3\)"),
    "projective object pose": ("object_pose", np.vstack([np.eye(4)[:3], [0.1, 0, 0, 1]]), "last row"),
    "sheared object pose": ("object_pose", np.array([[1, 0.2, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]),
                            "not a rigid transform"),
}


@pytest.mark.parametrize("entry", [simulate_grasp, robustness], ids=["simulate_grasp", "robustness"])
@pytest.mark.parametrize("case", POSES)
def test_poses(entry, case):
    name, bad, problem = POSES[case]
    poses = {"object_pose": np.eye(4), "grasp_pose": np.eye(4), name: bad}
    with pytest.raises(PoseError, match=rf"^{name}: .*{problem}.*fix"):
        entry(cube(), poses["object_pose"], poses["grasp_pose"])


@pytest.mark.parametrize("n_trials", [0, -3, True, 2.0])
def test_robustness_needs_at_least_one_trial(n_trials):
    with pytest.raises(ValueError, match="n_trials must be a positive integer"):
        robustness(cube(), np.eye(4), np.eye(4), n_trials=n_trials)


# ---------------------------------------------------------------- API: objects (item 3)

@pytest.mark.parametrize("mass, problem", [
    (True, "mass must be a positive finite number of kilograms"),
    ("0.05", "mass must be a positive finite number of kilograms"),
    (None, "mass must be a positive finite number of kilograms"),
    (10.0, r"density of 3.704e\+05 kg/m\^3, outside the plausible 10-25000 kg/m\^3"),
])
def test_object_mass(mass, problem):
    with pytest.raises(ValueError, match=rf"^cube: .*{problem}.*fix"):
        cube(mass)


def test_object_mesh_with_a_nan_vertex(tmp_path):
    path = tmp_path / "part.obj"
    path.write_text("v 0 0 0\nv 0.03 0 0\nv 0 0.03 0\nv nan 0 0.03\nv 0 0 0.03\n"
                    "f 1 3 2\nf 1 2 5\nf 2 3 5\nf 3 1 5\nf 1 2 4\n")
    with pytest.raises(MeshError, match=r"part.obj: 1 vertex\(es\) with NaN.*fix"):
        GraspObject.from_file(path, 0.01)


def test_object_too_small_for_the_pads():
    with pytest.raises(MeshError, match="speck: .*narrowest object the pads can grasp.*fix"):
        GraspObject.from_mesh(trimesh.creation.box(extents=(1.5e-3,) * 3), 1e-5, "speck")


def boxes(*placed) -> trimesh.Trimesh:
    """One mesh of several boxes, each (side in m, centre in m)."""
    return trimesh.util.concatenate([trimesh.creation.box(extents=(side,) * 3).apply_translation(centre)
                                     for side, centre in placed])


SHELLS = {  # one mesh, several closed surfaces: what a careless export gives
    "two disjoint boxes": boxes((0.03, (0, 0, 0)), (0.03, (0.1, 0, 0))),
    "two overlapping shells": boxes((0.03, (0, 0, 0)), (0.03, (0.015, 0, 0))),  # trimesh: 54 cm^3 for 40.5
    "a nested inner shell": boxes((0.03, (0, 0, 0)), (0.01, (0, 0, 0))),
}


@pytest.mark.parametrize("case", SHELLS)
def test_object_of_several_solids(case, tmp_path):
    path = tmp_path / "shells.stl"
    SHELLS[case].export(path)
    with pytest.raises(MeshError, match=rf"^{path}: the mesh is 2 separate closed surfaces, not one solid \(27 cm\^3 "
                                        r"in 12 faces, x -15..15, y -15..15, z -15..15 mm; .*fix: export one solid"):
        GraspObject.from_file(path, 0.05)
    GraspObject.from_mesh(boxes((0.03, (0, 0, 0))), 0.05, "one box")  # the first box alone is accepted


# ---------------------------------------------------------------- command line (items 1-6)

IPCGRASP_FORKS = ForkServer(BIN / "ipcgrasp", "ipcgrasp.cli:main", [
    # what the commands below import before they refuse their input
    "ipcgrasp.data.own", "ipcgrasp.dataset.records", "ipcgrasp.geometry.repair", "ipcgrasp.geometry.stable_pose",
    "ipcgrasp.grasp.simulate", "ipcgrasp.study.replay", "ipcgrasp.viz.trajectory_plot"])
"""`ipcgrasp ARGS` forked from a process that has imported the command line's modules: about 2 s
of CPU less a run, most of a refusal's."""


def ipcgrasp(*args, cwd=REPO):
    return IPCGRASP_FORKS.run(args, cwd=cwd, timeout=120)


def cube_mesh() -> Path:
    """The REACH data's 3 cm cube (the test skips without the data)."""
    return reach_data() / "object_meshes/cube_3cm.obj"


def cube_args(*extra):
    return ("--data", reach_data(), "--object", "cube_3cm", "--grasp", 0, *extra)


@pytest.fixture
def a_file(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("keep")
    return path


CLI = {
    "NaN Young's modulus": (lambda tmp, f: ("simulate", *cube_args("--E", "nan")), r"SimParams\.E must be.*finite"),
    "negative friction": (lambda tmp, f: ("simulate", *cube_args("--mu", "-0.2")), r"SimParams\.mu must be"),
    "grasp index out of range": (lambda tmp, f: ("simulate", "--data", reach_data(), "--object", "cube_3cm",
                                                 "--grasp", 99),
                                 "grasp index 99 out of range"),
    "JSON output is a directory": (lambda tmp, f: ("simulate", *cube_args("--json", tmp)),
                                   r"argument --json: .*test_cli_JSON_output_is_a_di\w* is a directory; fix"),
    "JSON output under a file": (lambda tmp, f: ("simulate", *cube_args("--json", f / "out.json")),
                                 r"argument --json: .*notes.txt/out.json: .*notes.txt is a file, not a directory"),
    "JSON output unwritable": (lambda tmp, f: ("simulate", *cube_args("--json", "/proc/out.json")),
                               "argument --json: /proc/out.json: cannot write in /proc"),
    "render as mp4": (lambda tmp, f: ("simulate", *cube_args("--render", tmp / "grasp.mp4")),
                      r"argument --render: .*grasp.mp4: unsupported file type '.mp4'; fix: .*\.gif or \.png"),
    "render --out as bmp": (lambda tmp, f: ("render", *cube_args("--out", tmp / "grasp.bmp")),
                            "argument --out: .*unsupported file type '.bmp'"),
    "quality picture as jpg": (lambda tmp, f: ("quality", *cube_args("--png", tmp / "q.jpg")),
                               r"argument --png: .*unsupported file type '.jpg'; fix: end the name with \.png"),
    "quality raster too large": (lambda tmp, f: ("quality", *cube_args("--resolution", "1e-7")),
                                 r"--resolution 1e-07: a silhouette of .* pixels .* fix: a resolution of at least"),
    "generate into a file": (lambda tmp, f: ("generate", "--mesh", cube_mesh(), "--mass",
                                             "0.003", "--n", 1, "--out", f), r"argument --out: .*notes.txt is a file; fix: give a directory"),
    "generate with the mass in grams": (lambda tmp, f: ("generate", "--mesh", cube_mesh(),
                                                        "--mass", "3", "--n", 1, "--out", tmp / "out"),
                                        r"cube_3cm: mass 3 kg .* outside the plausible .*\(not g\)"),
    "registry that is not YAML": (lambda tmp, f: ("objects", "--registry", f.with_name("bad.yaml")),
                                  r"bad.yaml: not valid YAML \(.*line"),
    "registry with an object twice": (lambda tmp, f: ("objects", "--registry", tmp / "twice.yaml"),
                                      r"twice.yaml: objects\.cube: the key is given twice .*fix: keep one of them"),
    "gripper with a NaN plate gap": (lambda tmp, f: ("generate", "--mesh", cube_mesh(),
                                                     "--mass", "0.003", "--n", 1, "--out", tmp / "out", "--gripper",
                                                     tmp / "nan_gap.yaml"),
                                     r"nan_gap.yaml: backing\.gap: nan is not a finite number; fix: give a number"),
    "mesh file that is a directory": (lambda tmp, f: ("generate", "--mesh", tmp, "--mass", "0.01", "--n", 1,
                                                      "--out", tmp / "out"), r"object mesh '.*test_cli_mesh_file\w*' does not exist"),
    "data directory missing": (lambda tmp, f: ("simulate", "--data", tmp / "nowhere", "--object", "cube_3cm",
                                               "--grasp", 0), "nowhere"),
}


@pytest.mark.parametrize("case", CLI)
def test_cli(case, tmp_path, a_file):
    make_args, message = CLI[case]
    (tmp_path / "bad.yaml").write_text("objects:\n  cube: {mass_g: 3\n  other: [\n")
    (tmp_path / "twice.yaml").write_text("objects:\n  cube: {mass_g: 3}\n  cube: {mass_g: 30}\n")
    (tmp_path / "nan_gap.yaml").write_text(load_description("franka_hand").path.read_text().replace(
        "backing: {", "backing: {gap: .nan, "))
    result = ipcgrasp(*make_args(tmp_path, a_file))
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert any(re.search(message, line) for line in lines), result.stderr
    assert "Traceback" not in result.stderr
    assert a_file.read_text() == "keep"


@pytest.mark.slow
def test_without_the_reach_data_its_cases_skip_naming_it_and_the_others_run(tmp_path):
    """This file collected and run where there is no REACH data: no collection error; a case
    that needs the data skips with the reason and where to get it, one that does not runs."""
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-n", "0", __file__,
                             "-k", "test_generate_refuses_a_folder_of_other_files or (test_cli and registry)"],
                            env={**os.environ, "IPCGRASP_DATA": str(tmp_path / "no_data")}, cwd=REPO,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "2 passed, 2 skipped" in result.stdout
    assert re.search(r"SKIPPED \[2\] .*needs the REACH data: .*no_data \(\$IPCGRASP_DATA\) is not a REACH data "
                     r"directory.*ipcgrasp data fetch", result.stdout), result.stdout[-3000:]


def test_cli_fetch_into_a_populated_directory_deletes_nothing(tmp_path):
    dest = tmp_path / "project"
    (dest / "object_meshes").mkdir(parents=True)
    (dest / "object_meshes" / "mine.obj").write_text("v 0 0 0\n")
    (dest / "README.md").write_text("my notes")
    result = ipcgrasp("data", "fetch", "--dest", dest)  # refused before any download
    assert result.returncode == 2
    assert f"--dest {dest} is not empty and is not a previous `ipcgrasp data fetch`" in result.stderr
    assert "nothing was changed" in result.stderr
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == ["README.md", "object_meshes",
                                                                              "object_meshes/mine.obj"]
    assert (dest / "README.md").read_text() == "my notes"


# ---------------------------------------------------------------- outputs replace nothing unasked (issue 49)

def kept(*paths):
    """Files that must survive a refused command, with their content."""
    for k, path in enumerate(paths):
        path.write_text(f"mine {k}")
    return {path: f"mine {k}" for k, path in enumerate(paths)}


def refused_before_work(result, message, files):
    assert result.returncode == 2, result.stdout + result.stderr
    assert re.search(message, " ".join(result.stderr.split())), result.stderr
    assert "Traceback" not in result.stderr and "R = " not in result.stdout  # nothing simulated
    assert {path: path.read_text() for path in files} == files


@pytest.mark.slow
def test_plot_keeps_an_existing_picture_it_was_not_told_to_replace(tmp_path):
    trajectory = tmp_path / "traj.nc"
    trajectory.write_bytes(b"not read: the outputs are checked first")
    files = kept(tmp_path / "traj.png")
    refused_before_work(ipcgrasp("plot", trajectory), rf"the picture \(TRAJECTORY.png; --out names another\): "
                                                      rf"{tmp_path}/traj.png exists; fix: .* add --overwrite", files)
    replaced = ipcgrasp("plot", trajectory, "--overwrite")  # goes on to read the (unreadable) trajectory
    assert replaced.returncode == 2 and "exists" not in replaced.stderr


@pytest.mark.parametrize("existing, message", [
    ("mine.json", r"--json: .*mine.json exists; fix: choose another name, remove the file, or add --overwrite"),
    ("anim_first.png", r"the first still of --render: .*anim_first.png exists"),
    ("anim_final.png", r"the final still of --render: .*anim_final.png exists"),
    ("tdir/cube_3cm_grasp0_trial1.nc", r"--trajectory-dir: .*tdir/cube_3cm_grasp0_trial1.nc exists"),
])
def test_simulate_refuses_to_replace_an_existing_output(tmp_path, existing, message):
    (tmp_path / "tdir").mkdir()
    files = kept(tmp_path / existing)
    result = ipcgrasp("simulate", *cube_args("--trials", 2, "--json", tmp_path / "mine.json", "--render",
                                             tmp_path / "anim.gif", "--trajectory-dir", tmp_path / "tdir"))
    refused_before_work(result, message, files)


@pytest.mark.parametrize("make_args, message", [
    pytest.param(lambda tmp: ("replay", tmp / "cube.nc", "--object", "cube_3cm", "--grasp", 0, "--trial", 0,
                              "--trajectory", tmp / "cube.nc", "--overwrite"),
                 r"--trajectory: .*cube.nc is also an input of this command .*fix: choose another output path",
                 marks=pytest.mark.slow),
    (lambda tmp: ("simulate", *cube_args("--json", tmp / "x.png", "--render", tmp / "x.png", "--overwrite")),
     r"--render: .*x.png is also written as --json; one would replace the other"),
    (lambda tmp: ("simulate", *cube_args("--json", "/dev/null")),
     r"argument --json: /dev/null exists and is not a regular file .*fix"),
    (lambda tmp: ("simulate", *cube_args("--json", tmp / "fifo")),
     r"argument --json: .*fifo exists and is not a regular file \(a device, FIFO or socket\)"),
], ids=["replay onto its own cube", "--json and --render one file", "device node", "FIFO"])
def test_an_output_that_is_an_input_or_not_a_regular_file_is_refused(tmp_path, make_args, message):
    files = kept(tmp_path / "cube.nc")
    os.mkfifo(tmp_path / "fifo")
    refused_before_work(ipcgrasp(*make_args(tmp_path)), message, files)
    assert stat.S_ISFIFO(os.stat(tmp_path / "fifo").st_mode)


def test_the_atomic_writer_leaves_a_fifo_alone(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="fifo exists and is not a regular file"):
        write_json_atomic(fifo, {"a": 1})
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize("shards", [(), ("--shard-size", 1)], ids=["one process", "snakemake jobs"])
def test_generate_refuses_a_folder_of_other_files(tmp_path, shards):
    files = kept(tmp_path / "index.csv", tmp_path / "grasp_0000.png")
    result = ipcgrasp("generate", "--mesh", cube_mesh(), "--mass", "0.003", "--n", 1,
                      "--out", tmp_path, *shards)
    refused_before_work(result, rf"{tmp_path}: not empty and not made by `ipcgrasp generate` \(no dataset.json\); "
                                "fix: give a new or empty output directory", files)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grasp_0000.png", "index.csv"]


def test_generate_refuses_a_mesh_of_two_solids_before_writing_anything(tmp_path):
    mesh = tmp_path / "two_boxes.stl"
    SHELLS["two disjoint boxes"].export(mesh)
    files = kept(tmp_path / "notes.txt")
    result = ipcgrasp("generate", "--mesh", mesh, "--mass", "0.05", "--n", 1, "--out", tmp_path / "out")
    refused_before_work(result, rf"{mesh}: the mesh is 2 separate closed surfaces, not one solid .* fix: export one "
                                "solid: .* boolean union", files)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "two_boxes.stl"]


# ---------------------------------------------------------------- the study: snakemake -n (item 1)

STUDY = {
    "sim.dt NaN": ({"sim": {"dt": math.nan}}, r"config sim\.dt = nan: must be a finite number"),
    "sim.dt infinite": ({"sim": {"dt": math.inf}},
                        r"inf is greater than the maximum of 0.1.*\['sim'\]\['properties'\]\['dt'\]"),
    "sim.mu_ground NaN": ({"sim": {"mu_ground": math.nan}}, r"config sim\.mu_ground = nan"),
    "sim.shake_amplitude above the lift": ({"sim": {"shake_amplitude": 0.05}},
                                           r"config sim\.shake_amplitude: .*below lift_height"),
    "sim.shake_frequency unresolved": ({"sim": {"shake_amplitude": 0.005, "shake_frequency": 20.0}},
                                       r"config sim\.shake_frequency: .*fewer than 8 time steps"),
    "grid.mu NaN": ({"grid": {"mu": [0.4, math.nan]}}, r"config grid\.mu\[1\] = nan"),
    "sim.newton_budget true": ({"sim": {"newton_budget": True}}, r"True is not of type 'integer'.*newton_budget"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", STUDY)
def test_study_config(case, tmp_path):
    changes, message = STUDY[case]
    config = yaml.safe_load((REPO / "config/smoke.yaml").read_text())
    for section, values in changes.items():
        config[section].update(values)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config))  # NaN and infinity as YAML's .nan and .inf
    result = dry_run("--configfile", str(path))
    assert result.returncode != 0
    output = " ".join((result.stdout + result.stderr).split())
    assert re.search(message, output), output[-2000:]
    assert "Job stats" not in result.stdout  # nothing planned


LAUGHS = "".join(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}" if i else "lol"] * 10) + "]\n" for i in range(9))


@pytest.mark.slow
@pytest.mark.parametrize("extra, message", [
    ("seed: 1\n", r"config file .*study.yaml: seed: the key is given twice in one mapping \(again at line \d+\); fix"),
    (LAUGHS, r"config file .*study.yaml: l3\[\d\]: the aliases \(\*name\) repeat more than \d+ values"),
], ids=["key given twice", "alias bomb"])
def test_study_config_file(extra, message, tmp_path):
    path = tmp_path / "study.yaml"
    path.write_text((REPO / "config/smoke.yaml").read_text() + extra)
    result = dry_run("--configfile", str(path))
    assert result.returncode != 0
    output = " ".join((result.stdout + result.stderr).split())
    assert re.search(message, output), output[-2000:]
    assert "Job stats" not in result.stdout


# ---------------------------------------------------------------- plot, view, replay: the file they read (issue 47)

def trajectory_file(path, steps=3, phase=None, attrs=None):
    """A trajectory file with the variables `plot` and `view` read (file_kinds.TRAJECTORY)."""
    phase = np.arange(steps, dtype=np.int8) % 3 if phase is None else np.asarray(phase, dtype=np.int8)
    data = {"phase": ("time", phase, {"flag_meanings": " ".join(PHASES)} if attrs is None else attrs),
            "pad_normal_force": (("time", "pad"), np.zeros((steps, 2))),
            "pad_friction_force": (("time", "pad"), np.zeros((steps, 2))),
            "jaw_opening": ("time", np.full(steps, 0.03)), "object_height": ("time", np.zeros(steps)),
            "object_rotation": (("time", "row", "col"), np.repeat(np.eye(3)[None], steps, axis=0))}
    xr.Dataset(data, coords={"time": 0.02 * (1 + np.arange(steps))}).to_netcdf(path, engine="netcdf4")
    return path


def cube_file(path, variables=("success", "failure_mode", "reason", "seed", "force_1", "force_2", "psi_th")):
    xr.Dataset({name: (("grasp", "trial"), np.zeros((1, 2))) for name in variables}).to_netcdf(path, engine="netcdf4")
    return path


def written(path, data: bytes):
    path.write_bytes(data)
    return path


TRAJECTORY_FIX = (r"fix: give a trial's trajectory \(written by `ipcgrasp simulate --trajectory` or `ipcgrasp replay "
                  r"--trajectory`\)")
CUBE_FIX = r"fix: give a study cube of simulated trials \(e.g. results/grid/rounded.nc"
REPLAY = ("--object", "cube_3cm", "--grasp", "0", "--trial", "0")


@pytest.mark.parametrize("command, make, expected", [
    ("plot", lambda p: written(p.with_suffix(".json"), b'{"success": true}'),
     r"traj.json is JSON text, not a NetCDF file; " + TRAJECTORY_FIX),
    ("plot", lambda p: written(p, b""), r"traj.nc is an empty file, not a NetCDF file; " + TRAJECTORY_FIX),
    ("plot", lambda p: cube_file(p), r"traj.nc is a study cube of simulated trials, which `ipcgrasp replay` read, "
                                     r"not a trial's trajectory; " + TRAJECTORY_FIX),
    ("plot", lambda p: cube_file(p, ("x", "y")), r"traj.nc is a NetCDF file that ipcgrasp did not write as a trial's "
                                                 r"trajectory: it lacks the variable\(s\) phase, pad_normal_force, "
                                                 r"pad_friction_force, jaw_opening, object_height, object_rotation; "
                                                 + TRAJECTORY_FIX),
    ("plot", lambda p: trajectory_file(p, steps=0), r"traj.nc: the trajectory has no step; fix: write the trajectory "
                                                    r"again"),
    ("plot", lambda p: trajectory_file(p, attrs={}), r"traj.nc: the phase variable has no flag_meanings attribute "
                                                     r"\(the names of its flag values, .*\); fix: write the trajectory"),
    ("plot", lambda p: trajectory_file(p, phase=[0, 1, 9]), r"traj.nc: phase flag 9 at step 2 is not one of the flag "
                                                            r"values 0..5 \(settle squeeze lift hold shake "
                                                            r"critical_mass\); fix: write the trajectory again"),
    ("view", lambda p: cube_file(p), r"traj.nc is a study cube of simulated trials, which `ipcgrasp replay` read, "
                                     r"not a trial's trajectory; " + TRAJECTORY_FIX),
    ("view", lambda p: written(p.with_suffix(".json"), b"[]"),
     r"traj.json is JSON text, not a NetCDF file; " + TRAJECTORY_FIX),
    ("view", lambda p: trajectory_file(p, steps=0), r"traj.nc: the trajectory has no step"),
    ("replay", lambda p: trajectory_file(p), r"traj.nc is a trial's trajectory, which `ipcgrasp plot`, `ipcgrasp "
                                             r"view` and `ipcgrasp frames` read, not a study cube of simulated "
                                             r"trials; " + CUBE_FIX),
    ("replay", lambda p: cube_file(p, ("success", "score", "runtime", "seed")),
     r"traj.nc is a study cube of a baseline's predictions, which the study's tables and figures \(`./run.sh study`\) "
     r"read, not a study cube of simulated trials; " + CUBE_FIX),
    ("replay", lambda p: cube_file(p), r"traj.nc: the failure_mode variable has no flag_meanings attribute .*fix: give "
                                       r"a cube the study wrote"),
    ("replay", lambda p: written(p.with_suffix(".json"), b"{}"),
     r"traj.json is JSON text, not a NetCDF file; " + CUBE_FIX),
], ids=["plot JSON", "plot empty", "plot a cube", "plot other NetCDF", "plot zero steps", "plot no flag_meanings",
        "plot phase out of range", "view a cube", "view JSON", "view zero steps", "replay a trajectory",
        "replay a baseline cube", "replay no flag_meanings", "replay JSON"])
def test_plot_view_and_replay_refuse_a_file_that_is_not_what_they_read(tmp_path, capsys, command, make, expected):
    path = make(tmp_path / "traj.nc")
    extra = {"plot": ("--out", str(tmp_path / "out.png")), "view": ("--port", "0"), "replay": REPLAY}[command]
    assert main([command, str(path), *extra]) == 2
    err = capsys.readouterr().err
    assert re.search(expected, err), err
    assert err.startswith("ipcgrasp: error: ") and "Traceback" not in err and not (tmp_path / "out.png").exists()
