"""Grasp-pose noise in the gripper frame and per-trial seeds."""

import subprocess
import sys

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ipcgrasp.grasp.perturbation import perturb_grasp, trial_seed


def _grasp():
    grasp = np.eye(4)
    grasp[:3, :3] = Rotation.from_euler("xyz", [0.7, -1.2, 2.5]).as_matrix()
    grasp[:3, 3] = [0.39, -0.01, 0.18]
    return grasp


def _noise_samples(n, translation_std, rotation_std, seed=0):
    rng = np.random.default_rng(seed)
    noise = np.array([perturb_grasp(np.eye(4), rng, translation_std, rotation_std) for _ in range(n)])
    return noise[:, :3, 3], Rotation.from_matrix(noise[:, :3, :3]).as_rotvec()


def _trial_rng(root_seed, grasp_index, trial_index):
    """The generator of one trial, as simulate.perturbed_grasp makes it."""
    return np.random.default_rng(trial_seed(root_seed, grasp_index, trial_index))


def test_zero_std_returns_the_pose_unchanged():
    grasp = _grasp()
    assert np.array_equal(perturb_grasp(grasp, np.random.default_rng(0), 0.0, 0.0), grasp)


def test_noise_statistics_match_the_standard_deviations():
    translation_std, rotation_std, n = 2e-3, 5e-3, 4000
    translation, rotation_vector = _noise_samples(n, translation_std, rotation_std)
    for samples, std in ((translation, translation_std), (rotation_vector, rotation_std)):
        assert np.all(np.abs(samples.mean(axis=0)) < 4 * std / np.sqrt(n))
        assert samples.std(axis=0) == pytest.approx([std] * 3, rel=0.05)  # ~4.5 standard errors
        correlation = np.corrcoef(samples.T)[np.triu_indices(3, 1)]
        assert np.all(np.abs(correlation) < 4 / np.sqrt(n))
    # the rotation angle |xi| is std * chi(3): mean std * 2 sqrt(2 / pi)
    angle = np.linalg.norm(rotation_vector, axis=1)
    assert angle.mean() == pytest.approx(rotation_std * 2 * np.sqrt(2 / np.pi), rel=0.03)
    # translation and rotation are independent
    assert abs(np.corrcoef(translation[:, 0], rotation_vector[:, 0])[0, 1]) < 4 / np.sqrt(n)


def test_default_standard_deviations_are_the_papers():
    grasp = _grasp()
    for seed in range(5):
        explicit = perturb_grasp(grasp, np.random.default_rng(seed), 1e-3, 3e-3)
        assert np.array_equal(perturb_grasp(grasp, np.random.default_rng(seed)), explicit)


def test_noise_is_applied_in_the_gripper_frame():
    grasp = _grasp()
    perturbed = perturb_grasp(grasp, np.random.default_rng(7))
    noise = perturb_grasp(np.eye(4), np.random.default_rng(7))
    assert np.allclose(np.linalg.solve(grasp, perturbed), noise, atol=1e-15)
    assert np.allclose(perturbed, grasp @ noise, atol=1e-15)
    assert not np.allclose(perturbed, noise @ grasp, atol=1e-4)  # not a world-frame perturbation
    rotation = perturbed[:3, :3]
    assert np.allclose(rotation.T @ rotation, np.eye(3), atol=1e-14) and np.linalg.det(rotation) == pytest.approx(1.0)
    assert np.array_equal(perturbed[3], [0, 0, 0, 1])


def test_each_call_draws_six_normals_whatever_the_stds():
    for stds in ((1e-3, 3e-3), (0.0, 0.0), (0.0, 1.0)):
        rng, reference = np.random.default_rng(3), np.random.default_rng(3)
        perturb_grasp(np.eye(4), rng, *stds)
        reference.standard_normal(6)
        assert rng.standard_normal() == reference.standard_normal()


def test_perturbation_is_deterministic_for_a_seed():
    grasp = _grasp()
    first = perturb_grasp(grasp, _trial_rng(0, 3, 2))
    assert np.array_equal(first, perturb_grasp(grasp, _trial_rng(0, 3, 2)))
    assert not np.allclose(first, perturb_grasp(grasp, _trial_rng(0, 3, 1)))


def test_invalid_arguments_raise():
    with pytest.raises(ValueError, match="non-negative"):
        perturb_grasp(np.eye(4), np.random.default_rng(0), -1e-3)
    with pytest.raises(ValueError, match="4x4"):
        perturb_grasp(np.eye(3), np.random.default_rng(0))
    with pytest.raises(ValueError, match="non-negative"):
        trial_seed(0, -1, 0)
    with pytest.raises(TypeError):
        trial_seed(0, 1.5, 0)


def test_trial_seeds_are_distinct_and_independent_of_call_order():
    keys = [(root, g, t) for root in range(3) for g in range(25) for t in range(5)]
    seeds = {key: trial_seed(*key) for key in keys}
    assert len(set(seeds.values())) == len(keys)
    assert all(0 <= seed < 2**63 for seed in seeds.values())
    for key in reversed(keys[::7]):
        assert trial_seed(*key) == seeds[key]
    # keys that a naive combination would confuse
    assert trial_seed(0, 1, 0) != trial_seed(0, 0, 1) != trial_seed(1, 0, 0)
    assert trial_seed(np.int64(2), np.int32(4), 3) == seeds[(2, 4, 3)]
    rng = _trial_rng(1, 24, 4)
    assert rng.standard_normal(4).tolist() == np.random.default_rng(seeds[(1, 24, 4)]).standard_normal(4).tolist()


def test_trial_seeds_are_stable_across_processes():
    keys = [(0, 0, 0), (0, 24, 4), (7, 3, 2)]
    code = ("from ipcgrasp.grasp.perturbation import trial_seed; "
            f"print([trial_seed(*k) for k in {keys!r}])")
    output = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert output.strip() == str([trial_seed(*k) for k in keys])
