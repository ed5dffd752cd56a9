"""MuJoCo flex-pad baseline: the scene (pad grid, held back faces, placement against the
simulator's tooltip poses), the 3 cm cube grasped through its centre (lifts with mu 0.5, slips
when 2 mu F is a quarter of its weight), and the penalty artifacts: interpenetration shrinks as
the contact stiffness grows, the force-field gap grows with the margin."""

import functools

import mujoco
import numpy as np
import pytest
import shapely
import trimesh

from ipcgrasp.baselines.mujoco_flex import GRID_COUNT, MujocoSettings, build_model, pad_grid, predict, sweep
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object
from ipcgrasp.geometry.pads import PAD_SCALE, PAD_THICKNESS, pad_outline
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.grasp.scene import place_scene

from .test_contacts import box_object, no_noise, top_down_grasp

THICKNESS = PAD_THICKNESS * PAD_SCALE
G = 9.81


@pytest.fixture(scope="module")
def cube() -> GraspObject:
    path, mass = load_object(resolve_data_dir(), "cube_3cm")
    return GraspObject.from_file(path, mass)


def centre_grasp(cube: GraspObject) -> np.ndarray:
    """Top-down grasp with the tooltip origins at the cube's centre, closing along world y."""
    return top_down_grasp(cube.mesh.bounds.mean(axis=0), closing_axis=(0.0, 1.0, 0.0))


@functools.lru_cache(maxsize=None)
def cube_trial(mu: float, stiffness: float = 1e8, margin: float = 0.0):
    """One noise-free trial of the centre grasp (cached: several tests read the same run)."""
    path, mass = load_object(resolve_data_dir(), "cube_3cm")
    obj = GraspObject.from_file(path, mass)
    return predict(obj, np.eye(4), centre_grasp(obj), no_noise(mu=mu), seed=0, stiffness=stiffness,
                   damping=np.sqrt(stiffness), margin=margin)


def test_pad_grid_fills_the_pad():
    points, tets, back = pad_grid("rectangular")
    assert len(points) == np.prod(GRID_COUNT) == 90
    a, b, c, d = (points[tets[:, k]] for k in range(4))
    volumes = np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a) / 6.0
    assert np.all(volumes > 0.0)
    # the tets tile the inset box exactly
    extent = points.max(axis=0) - points.min(axis=0)
    assert volumes.sum() == pytest.approx(np.prod(extent), rel=1e-12)
    assert np.allclose(points[back, 2], -THICKNESS) and len(back) == GRID_COUNT[0] * GRID_COUNT[1]

    rounded, tets, _ = pad_grid("rounded")
    outline = pad_outline("rounded")
    assert np.all(shapely.contains_xy(outline.buffer(1e-9), rounded[:, 0], rounded[:, 1]))
    hull = shapely.MultiPoint(rounded[:, :2]).convex_hull
    # the nodes cover the outline but for the radius inset and the chords of the rounded tip
    assert hull.area / outline.area > 0.9
    a, b, c, d = (rounded[tets[:, k]] for k in range(4))
    assert np.all(np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a) > 0.0)


def test_scene_places_pads_on_the_simulator_tooltips_and_holds_back_faces(cube):
    params = SimParams()
    object_pose, grasp_pose = place_scene(cube.mesh, np.eye(4), centre_grasp(cube))
    gripper = Gripper.yumi()
    tooltips = gripper.tooltip_poses(grasp_pose, 0.04)
    model = build_model(cube, object_pose, tooltips, params, MujocoSettings(), gripper)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    assert model.nflex == 2 and list(model.flex_vertnum) == [90, 90]
    assert model.opt.integrator == mujoco.mjtIntegrator.mjINT_DISCRETE
    assert model.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
    # the object geom sits where the object mesh is placed
    geom = model.geom("object").id
    mesh = model.geom_dataid[geom]
    start = model.mesh_vertadr[mesh]
    local = model.mesh_vert[start:start + model.mesh_vertnum[mesh]]
    world = local @ data.geom_xmat[geom].reshape(3, 3).T + data.geom_xpos[geom]
    expected = trimesh.transform_points(cube.mesh.vertices, object_pose)
    assert np.allclose(np.sort(world, axis=0), np.sort(expected, axis=0), atol=1e-9)
    # each pad's nodes in its tooltip frame are the pad grid; the held nodes are its back face
    points, _, back = pad_grid(params.jaw)
    connect = model.eq_type == mujoco.mjtEq.mjEQ_CONNECT
    for i, pose in enumerate(tooltips):
        nodes = data.flexvert_xpos[model.flex_vertadr[i]:model.flex_vertadr[i] + 90]
        assert np.allclose((nodes - pose[:3, 3]) @ pose[:3, :3], points, atol=1e-9)
        held = model.eq_obj1id[connect & (model.eq_obj2id == model.body(f"backing{i}").id)]
        assert sorted(held) == sorted(model.flex_vertbodyid[model.flex_vertadr[i] + back])
    # move the jaws and lift: the back faces follow their backings rigidly
    data.ctrl[:] = [2e-3, 2e-3, 3e-3]
    for _ in range(300):
        mujoco.mj_step(model, data)
    for i, pose in enumerate(tooltips):
        backing = model.body(f"backing{i}").id
        frame = np.eye(4)
        frame[:3, :3], frame[:3, 3] = data.xmat[backing].reshape(3, 3), data.xpos[backing]
        assert np.allclose(frame[:3, 3] - pose[:3, 3], 2e-3 * pose[:3, 2] + [0, 0, 3e-3], atol=1e-5)
        nodes = data.flexvert_xpos[model.flex_vertadr[i] + back]
        assert np.allclose((nodes - frame[:3, 3]) @ frame[:3, :3], points[back], atol=2e-6)


def test_settings_are_checked():
    with pytest.raises(ValueError, match="stiffness"):
        MujocoSettings(stiffness=-1e8)
    with pytest.raises(ValueError, match="margin"):
        MujocoSettings(margin=-1e-4)
    with pytest.raises(ValueError, match="dt"):
        MujocoSettings(dt=0.02)
    with pytest.raises(TypeError, match="stiffness, damping, margin, dt"):
        predict(None, np.eye(4), np.eye(4), SimParams(), 0, solref=(-1e8, -1e4))


def test_sweep_runs_every_setting_on_every_trial():
    # a 10 cm box the 50 mm jaws cannot clear: each trial ends before MuJoCo runs ("no_clearance")
    box = box_object((0.1, 0.1, 0.03), mass=0.05)
    trials = [(np.eye(4), top_down_grasp((0.0, 0.0, 0.0)), seed) for seed in (3, 4)]
    rows = sweep(box, trials, SimParams(), stiffness=(1e7, 1e8), margin=(0.0, 1e-3), damping_ratio=0.5)
    assert [(r["stiffness"], r["margin"], r["trial"]) for r in rows] == [
        (k, b, t) for k in (1e7, 1e8) for b in (0.0, 1e-3) for t in (0, 1)]
    assert all(r["damping"] == pytest.approx(np.sqrt(r["stiffness"])) for r in rows)
    assert all(not r["success"] and r["failure_mode"] == "no_clearance" for r in rows)
    fixed = sweep(box, trials[:1], SimParams(), stiffness=(1e7,), margin=(0.0,), damping=123.0)
    assert fixed[0]["damping"] == 123.0


@pytest.mark.slow
def test_cube_centre_grasp_lifts_with_friction(cube):
    result = cube_trial(0.5)
    assert result.success, result.info["reason"]
    assert result.info["failure_mode"] is None
    # the close rule fired at the closing force, both pads within 50 % of it
    assert all(20.0 <= f < 30.0 for f in result.info["close_forces"])
    # the jaws closed to about the cube's width
    assert result.info["close_opening"] == pytest.approx(0.03, abs=1.5e-3)
    assert result.info["lift_height"] >= SimParams().lift_height
    assert result.runtime == result.info["wall_time"] > 0.0


@pytest.mark.slow
def test_cube_centre_grasp_slips_without_friction(cube):
    # two pads squeezing with F carry at most 2 mu F of weight: a quarter of the cube's
    params = SimParams()
    mu = 0.25 * cube.mass * G / (2.0 * params.close_force)
    result = cube_trial(mu)
    assert not result.success
    assert result.info["failure_mode"] == "slip"
    assert result.info["lift_height"] < params.lift_height


@pytest.mark.slow
def test_interpenetration_shrinks_as_contact_stiffness_grows():
    soft, stiff = cube_trial(0.5, stiffness=1e7), cube_trial(0.5, stiffness=1e8)
    assert soft.info["penetration_pad"] > 0.0 and stiff.info["penetration_pad"] > 0.0
    assert stiff.info["penetration_pad"] < 0.5 * soft.info["penetration_pad"]
    assert soft.info["force_gap"] == stiff.info["force_gap"] == 0.0  # no margin: no force field


@pytest.mark.slow
def test_force_gap_grows_with_margin():
    gaps = [cube_trial(0.5, margin=margin).info["force_gap"] for margin in (0.0, 5e-4, 1e-3)]
    assert gaps[0] == 0.0 < gaps[1] < gaps[2]
    # contacts act from the margin on, and no farther
    assert 0.5 * 5e-4 < gaps[1] <= 5e-4 + 1e-9 and 0.5e-3 < gaps[2] <= 1e-3 + 1e-9
    # the force field holds the pads off the object: less penetration than without a margin
    assert cube_trial(0.5, margin=5e-4).info["penetration_pad"] < cube_trial(0.5).info["penetration_pad"]


@pytest.mark.slow
def test_a_mujoco_trial_records_a_trajectory_with_what_it_reports(cube):
    """MuJoCo goes through the same procedure: its trajectory has the pads' normal forces, the
    object's motion and MuJoCo's contact count, and NaN where it reports nothing (friction,
    strain energy, ground reaction, per-contact points)."""
    from ipcgrasp.baselines.mujoco_flex import MujocoBackend
    from ipcgrasp.grasp.simulate import simulate_grasp
    from ipcgrasp.grasp.trajectory import trajectory_dataset

    params = no_noise(mu=0.5, close_rule="force", lift_height=0.005, hold_time=0.02)
    result = simulate_grasp(cube, np.eye(4), centre_grasp(cube), params, seed=0, gripper=Gripper.yumi(params.jaw),
                            backend=lambda *args: MujocoBackend(*args, settings=MujocoSettings()),
                            record="trajectory")
    assert result.success, result.reason
    ds = trajectory_dataset(result, params)
    assert ds.sizes["time"] == result.steps
    close = ds.sel(time=result.close_time, method="nearest")
    assert tuple(close.pad_normal_force.values) == pytest.approx(result.close_forces, rel=1e-12)
    assert float(ds.object_height[-1]) >= params.lift_height and int(ds.n_contacts.max()) > 0
    for name in ("pad_friction_force", "pad_strain_energy", "ground_reaction"):
        assert np.all(np.isnan(ds[name].values)), name
    assert int(ds.n_pad_contacts.max()) == 0
