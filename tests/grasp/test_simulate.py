"""simulate_grasp on recorded cube grasps (no intersection at any step, checked with ipctk;
bit-identical for a fixed seed) and robustness() on a flat block."""

import itertools
import json

import ipctk
import numpy as np
import pytest
import trimesh

from ipcgrasp import GraspObject, SimParams, robustness, simulate_grasp
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_physical_grasps
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.outcome import FAILURE_MODES
from ipcgrasp.grasp.procedure import FORCE_TOLERANCE
from ipcgrasp.grasp.scene import place_scene
from ipcgrasp.grasp.simulate import perturbed_grasp, trial_seeds

CUBE_GRASPS = (0, 19)  # physical robustness 1.0 and 0.0 (19: the pads graze an edge)
SHORT = dict(lift_height=0.005, hold_time=0.04)  # default noise, shorter lift and hold
GLUED = ({"pad0", "backing0"}, {"pad1", "backing1"})  # each pad's back face lies on its backing
BODIES = {"object", "pad0", "pad1", "backing0", "backing1"}


@pytest.fixture(scope="module")
def cube():
    data = resolve_data_dir()
    grasps = load_physical_grasps(data, "cube_3cm")
    return GraspObject.from_file(data / "object_meshes" / "cube_3cm.obj", 0.003), grasps


@pytest.fixture(scope="module")
def cube_trials(cube):
    obj, grasps = cube
    return {g: simulate_grasp(obj, grasps.object_poses[g], grasps.grasp_poses[g], SimParams(**SHORT), seed=g,
                              record="frames") for g in CUBE_GRASPS}


def _surface(vertices, faces):
    """The vertices the faces use, and the faces renumbered to them."""
    used, inverse = np.unique(faces, return_inverse=True)
    return vertices[used], inverse.reshape(-1, 3).astype(np.int32)


def intersecting_pairs(frame, faces) -> list:
    """Body pairs (not glued) whose surfaces intersect in a recorded frame, by ipctk: each pair
    as one collision mesh, so a body's own self-intersection is found too."""
    found = []
    for a, b in itertools.combinations(sorted(faces), 2):
        if {a, b} in GLUED:
            continue
        va, fa = _surface(frame[a], faces[a])
        vb, fb = _surface(frame[b], faces[b])
        vertices = np.vstack([va, vb])
        tris = np.vstack([fa, fb + len(va)]).astype(np.int32)
        if ipctk.has_intersections(ipctk.CollisionMesh(vertices, ipctk.edges(tris), tris), vertices):
            found.append((a, b))
    return found


@pytest.mark.parametrize("grasp", CUBE_GRASPS)
def test_cube_trial_runs_to_completion(cube_trials, grasp):
    r = cube_trials[grasp]
    assert r.failure_mode != "solver", r.reason
    assert r.failure_mode in FAILURE_MODES or (r.failure_mode is None and r.success)
    assert r.success == (r.failure_mode is None)
    assert r.seed == grasp and r.steps > 0 and r.newton_iterations > 0
    assert r.reason
    assert set(r.faces) == BODIES
    assert all(set(f) == BODIES | {"time", "contacts"} for f in r.frames)
    assert all(f["contacts"].ndim == 2 and f["contacts"].shape[1] == 3 for f in r.frames)
    if r.success:  # held: the last frame shows where the pads touch the cube
        assert len(r.frames[-1]["contacts"]) > 0
    assert 0.0 < r.min_distance < np.inf


@pytest.mark.parametrize("grasp", CUBE_GRASPS)
def test_no_intersection_and_nothing_below_the_ground_at_any_frame(cube_trials, grasp):
    r = cube_trials[grasp]
    assert len(r.frames) > 10
    for k, frame in enumerate(r.frames):
        assert intersecting_pairs(frame, r.faces) == [], f"frame {k} at t = {frame['time']} s"
        lowest = {name: frame[name][np.unique(r.faces[name]), 2].min() for name in BODIES}
        assert min(lowest.values()) > 0.0, (k, lowest)


def test_intersection_check_finds_overlaps(cube_trials):
    """The oracle above is not vacuous: a pad pushed onto a cube corner intersects it."""
    r = cube_trials[CUBE_GRASPS[0]]
    frame = dict(r.frames[0])
    frame["pad0"] = frame["pad0"] + (frame["object"][0] - frame["pad0"][np.unique(r.faces["pad0"])].mean(axis=0))
    assert ("object", "pad0") in intersecting_pairs(frame, r.faces)


def _deterministic_summary(result) -> str:
    return json.dumps({k: v for k, v in result.summary().items() if not k.startswith("wall_time")}, sort_keys=True)


def test_same_seed_gives_bit_identical_results(cube, cube_trials):
    obj, grasps = cube
    g = CUBE_GRASPS[0]
    again = simulate_grasp(obj, grasps.object_poses[g], grasps.grasp_poses[g], SimParams(**SHORT), seed=g)
    first = cube_trials[g]
    # recording frames must not change the physics either
    assert _deterministic_summary(again) == _deterministic_summary(first)
    assert np.array_equal(again.grasp_pose, first.grasp_pose)
    assert again.frames == []


@pytest.mark.parametrize("grasp", CUBE_GRASPS)
def test_summary_of_a_trial_is_plain_json(cube_trials, grasp):
    s = cube_trials[grasp].summary()
    assert json.loads(json.dumps(s)).keys() == s.keys()
    assert {"wall_time_initialise", "wall_time_squeeze"} <= set(s)


def test_robustness_runs_independent_perturbed_trials():
    obj = GraspObject.from_mesh(trimesh.creation.box(extents=(0.03, 0.02, 0.03)), mass=0.01, name="block")
    grasp = np.eye(4)
    grasp[:3, :3] = np.diag([1.0, -1.0, -1.0])
    grasp[2, 3] = Gripper.yumi().tooltip_transforms[:, 2, 3].mean()  # pads at the block's mid height
    params = SimParams(**SHORT)
    seen = []
    rob = robustness(obj, np.eye(4), grasp, params, n_trials=2, seed=3, workers=1, on_trial=seen.append)
    assert len(rob.trials) == 2 and seen == rob.trials
    seeds = [t.seed for t in rob.trials]
    assert seeds == trial_seeds(3, 0, 2) and seeds[0] != seeds[1]
    for trial, seed in zip(rob.trials, seeds):
        expected = place_scene(obj.mesh, np.eye(4), perturbed_grasp(grasp, params, seed))[1]
        np.testing.assert_array_equal(trial.grasp_pose, expected)
        assert trial.failure_mode != "solver", trial.reason
    assert not np.array_equal(rob.trials[0].grasp_pose, rob.trials[1].grasp_pose)
    assert rob.robustness in (0.0, 0.5, 1.0)
    assert rob.robustness == np.mean([t.success for t in rob.trials])
    # 1 mm and 0.003 rad of noise cannot spoil a centred grasp on a 30 mm block in 50 mm jaws
    assert rob.robustness == 1.0


def test_line_search_extrapolation_shortens_a_hard_squeeze_without_moving_its_answer(cube, monkeypatch):
    """Physical cube grasp 4 without noise, force rule, squeezed to 60 N. When the second pad
    presses the cube hard, about 140 contacts sit a micrometre apart and their PSD-projected
    Hessians show curvature along a direction where the incremental potential is nearly linear:
    each full Newton step lowers E by twice what its quadratic model predicts. The line search
    then doubles the step (solver.line_search.extrapolate); without that, single solves creep along the
    direction just above the Newton tolerance (417 Newton iterations in the trial against 305).
    Same verdict, closing forces both inside the close window (60 N to 2 % above: a retry of a
    squeeze step is aimed through where its try ended, which the two solves place differently
    within their tolerance, 60.4 and 60.1 N)."""
    from ipcgrasp.engine.solver import line_search

    obj, grasps = cube
    params = SimParams(noise_translation=0.0, noise_rotation=0.0, close_rule="force", close_force=60.0)

    def run():
        return simulate_grasp(obj, grasps.object_poses[4], grasps.grasp_poses[4], params, seed=0)

    extrapolated = run()
    monkeypatch.setattr(line_search, "MAX_EXTRAPOLATIONS", 0)
    plain = run()
    assert extrapolated.success and plain.success
    assert extrapolated.newton_iterations < 0.95 * plain.newton_iterations
    for closed in (extrapolated, plain):
        assert params.close_force <= min(closed.close_forces) <= (1 + FORCE_TOLERANCE) * params.close_force
