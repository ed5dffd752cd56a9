"""A held object pivots about the grasp axis exactly when the weight's torque about that axis
exceeds the pads' torsional friction (`grasp.grip_motion`): closed-form checks of the measures,
and a bar grasped off its centre of mass at half and twice the threshold mass."""

import numpy as np
import pytest
import trimesh

from ipcgrasp import GraspObject, SimParams, simulate_grasp
from ipcgrasp.grasp.grip_motion import (GRAVITY, GripReference, grip_motion, gravity_torque, lever_arm,
                                        rotation_vector, torsional_capacity)


def _rotation(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def _pose(rotation=np.eye(3), translation=(0, 0, 0)):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = rotation, translation
    return T


def _disc(radius, centre, n=120):
    """Points of a uniform polar-area grid on a disc in the y-z plane (equal area per point)."""
    r = radius * np.sqrt((np.arange(n) + 0.5) / n)
    points = []
    for k, rk in enumerate(r):
        for j in range(48):
            t = 2 * np.pi * (j + 0.5 * (k % 2)) / 48
            points.append(centre + [0.0, rk * np.cos(t), rk * np.sin(t)])
    return np.array(points)


def test_uniform_pressure_on_two_discs_resists_four_thirds_mu_f_a():
    a, F, mu = 0.004, 20.0, 0.4
    discs = [_disc(a, np.array([-0.01, 0.0, 0.0])), _disc(a, np.array([0.01, 0.003, -0.002]))]
    points = np.concatenate(discs)
    per_point = F / len(discs[0])
    forces = np.concatenate([np.tile([per_point, 0, 0], (len(discs[0]), 1)),
                             np.tile([-per_point, 0, 0], (len(discs[1]), 1))])
    pads = np.repeat([0, 1], len(discs[0]))
    cap = torsional_capacity(points, forces, pads, mu, [1.0, 0.0, 0.0])
    assert cap.forces == pytest.approx((F, F))
    assert cap.capacity == pytest.approx(2 * 2 / 3 * mu * F * a, rel=2e-3)
    assert cap.radii == pytest.approx((a, a), rel=2e-3) and cap.radius == pytest.approx(a, rel=2e-3)
    assert cap.centres[1] == pytest.approx([0.01, 0.003, -0.002])


def test_no_point_forces_give_no_capacity():
    cap = torsional_capacity(np.zeros((3, 3)), np.full((3, 3), np.nan), np.array([0, 1, 1]), 0.4, [1, 0, 0])
    assert np.isnan(cap.capacity) and np.isnan(cap.radius)
    assert np.isnan(torsional_capacity(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0), 0.4, [1, 0, 0]).capacity)


def test_the_lever_arm_is_the_horizontal_distance_across_the_axis():
    axis = [0.0, 1.0, 0.0]
    assert lever_arm([0.03, 0.5, -0.02], [0, 0, 0], axis) == pytest.approx(0.03)  # along the axis and below: no arm
    assert gravity_torque(0.2, [0.03, 0.0, 0.0], [0, 0, 0], axis) == pytest.approx(0.2 * GRAVITY * 0.03)


@pytest.mark.parametrize("angle", [1e-12, 0.3, 2.0, np.pi])
def test_rotation_vector_inverts_the_rotation(angle):
    axis = np.array([0.2, -0.5, 0.8]) / np.linalg.norm([0.2, -0.5, 0.8])
    v = rotation_vector(_rotation(axis, angle))
    assert np.linalg.norm(v) == pytest.approx(angle, abs=1e-9)
    if angle > 1e-6:
        assert abs(v @ axis) == pytest.approx(angle, abs=1e-9)


def test_grip_motion_tells_a_pivot_about_the_grasp_axis_from_a_slide_along_the_pads_and_a_roll_over_them():
    # gripper frame rotated and lifted; grasp axis its x; grasp centre 0.16 m along its z
    wrist = _pose(_rotation([1, 1, 0], 2.5), [0.1, -0.2, 0.3])
    axis = wrist[:3, 0]
    centre = wrist[:3, 3] + 0.16 * wrist[:3, 2]
    obj = _pose(_rotation([0, 0, 1], 0.4), [0.12, -0.05, 0.02])
    ref = GripReference(wrist, obj, centre, axis)
    assert grip_motion(ref, wrist, obj) == pytest.approx((0.0, 0.0, 0.0), abs=1e-12)
    lifted = wrist.copy()
    lifted[2, 3] += 0.02
    carried = obj.copy()
    carried[2, 3] += 0.02
    assert grip_motion(ref, lifted, carried) == pytest.approx((0.0, 0.0, 0.0), abs=1e-12)  # moved with the gripper
    # turned 0.3 rad about the grasp axis through the centre: a pivot, no slide
    turn = _pose(_rotation(axis, 0.3))
    about_centre = _pose(translation=centre) @ turn @ _pose(translation=-centre)
    slide, pivot, roll = grip_motion(ref, wrist, about_centre @ obj)
    assert slide == pytest.approx(0.0, abs=1e-12) and pivot == pytest.approx(0.3)
    assert roll == pytest.approx(0.0, abs=1e-9)
    # turned 0.2 rad about the approach (gripper z) through the centre, an axis across the grasp axis: a roll
    across = _pose(translation=centre) @ _pose(_rotation(wrist[:3, 2], -0.2)) @ _pose(translation=-centre)
    slide, pivot, roll = grip_motion(ref, wrist, across @ obj)
    assert slide == pytest.approx(0.0, abs=1e-12) and pivot == pytest.approx(0.0, abs=1e-9)
    assert roll == pytest.approx(0.2)
    # moved 2 mm down, across the axis: a slide, no pivot; a shift along the axis is no slide
    down = np.cross(axis, wrist[:3, 1])
    slid = obj.copy()
    slid[:3, 3] += 0.002 * down + 0.005 * axis
    assert grip_motion(ref, wrist, slid) == pytest.approx((0.002, 0.0, 0.0), abs=1e-12)


BAR = (0.12, 0.02, 0.02)
"""m: the bar, lying along x on the ground."""
OFFSET = 0.045
"""m: the grasp's distance from the bar's centre along it (the pads, 16 mm wide along the bar,
stay 7 mm inside its end)."""


def _bar_trial(mass: float):
    """The bar (BAR, `mass` kg) grasped across its 20 mm width by the YuMi's rectangular pads,
    approached from above, OFFSET from its centre; no pose noise."""
    bar = GraspObject.from_mesh(trimesh.creation.box(BAR), mass, "bar", density_range=(10.0, 1e5))
    object_pose = _pose(translation=(0.0, 0.0, BAR[2] / 2))
    grasp = _pose(np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]]).T,
                  (OFFSET, 0.0, BAR[2] / 2 + 0.160098))  # x closing (world y), z approach (down); pads at mid-height
    params = SimParams(jaw="rectangular", noise_translation=0.0, noise_rotation=0.0)
    return simulate_grasp(bar, object_pose, grasp, params, record="trajectory")


@pytest.mark.slow
def test_a_bar_grasped_off_its_centre_pivots_iff_its_weight_torque_exceeds_the_torsional_friction():
    """Threshold mass m* = C / (g d): C the pads' torsional capacity measured at the close (about
    4/3 mu F a: F = 20 N, mu = 0.4 and a the pads' equivalent patch radius), d = OFFSET. The pads
    (16 mm wide, 22 mm long along the approach, their tips 8 mm below their centre) meet the 20 mm
    bar face on a 16 x 18 mm rectangle: under uniform pressure its mean distance from its centre
    is 6.5 mm, a disc of a = 9.8 mm; the simulation's pressure peaks towards the pad's edges, so
    its a is about 10.4 mm (the threshold near 0.26 kg). At 0.5 m* the bar is held and turns less
    than a degree; at 2 m* it pivots about the grasp axis, its far end down on the ground, and
    the slip's reason says so with both torques."""
    probe = _bar_trial(0.05)
    assert probe.success, probe.reason
    a = probe.contact_radius
    assert 0.0098 * 0.95 < a < 0.0098 * 1.25  # the uniform-pressure disc of the 16 x 18 mm patch, edges heavier
    threshold = probe.torsional_capacity / (GRAVITY * probe.lever_arm)
    assert probe.lever_arm == pytest.approx(OFFSET, abs=0.001)
    assert probe.torsional_capacity == pytest.approx(4 / 3 * 0.4 * np.mean(probe.close_forces) * a, rel=0.02)

    half = _bar_trial(0.5 * threshold)
    assert half.gravity_torque / half.torsional_capacity == pytest.approx(0.5, abs=0.03)
    assert half.success, half.reason
    assert half.grip_pivot < np.radians(1.0) and half.grip_slide < 1e-4
    assert half.slip_kind == ""

    double = _bar_trial(2.0 * threshold)
    assert double.gravity_torque / double.torsional_capacity == pytest.approx(2.0, abs=0.1)
    assert not double.success and double.failure_mode == "slip"
    assert double.slip_kind == "pivoted" and double.grip_pivot > np.radians(8.0)
    assert double.grip_slide < 0.1 * double.grip_pivot * (BAR[0] / 2 + OFFSET)  # the far end moved, not the centre
    assert "pivoted" in double.reason and "torsional friction capacity" in double.reason
    pivots = np.array([s.grip_pivot for s in double.trajectory if s.phase in ("lift", "hold")])
    assert np.all(np.isfinite(pivots)) and np.max(np.abs(pivots)) == pytest.approx(double.grip_pivot)
