import json

import numpy as np
import pytest

from ipcgrasp.data.registry import ObjectInfo, load_registry
from ipcgrasp.study.split import (
    SplitError,
    load_split,
    make_split,
    object_split,
    stratified_grasp_split,
    stratified_subset,
    strata,
)

# DATA.md section 2: per-grasp physical robustness of cube_3cm
CUBE = np.array([1, .8, .2, 1, .8, 1, .2, 1, .4, 1, .8, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1])


def test_cube_split_is_a_stratified_partition():
    training, heldout = stratified_grasp_split(CUBE, 0.5, 0.5, seed=0)
    assert np.array_equal(np.sort(np.r_[training, heldout]), np.arange(25))
    assert not set(training) & set(heldout)
    # 20 robust and 5 non-robust grasps: round(0.5 * 20) = 10 and round(0.5 * 5) = 2 (half to even)
    assert np.sum(CUBE[training] >= 0.5) == 10 and np.sum(CUBE[training] < 0.5) == 2
    assert np.sum(CUBE[heldout] >= 0.5) == 10 and np.sum(CUBE[heldout] < 0.5) == 3


def test_split_is_deterministic_in_the_seed():
    a = stratified_grasp_split(CUBE, seed=3)
    b = stratified_grasp_split(CUBE, seed=3)
    c = stratified_grasp_split(CUBE, seed=4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])


@pytest.mark.parametrize("seed", range(20))
def test_each_stratum_keeps_the_training_fraction_on_random_data(seed):
    rng = np.random.default_rng(seed)
    robustness = rng.integers(0, 6, size=rng.integers(4, 60)) / 5
    fraction = rng.uniform(0.2, 0.8)
    training, heldout = stratified_grasp_split(robustness, fraction, 0.5, seed)
    for stratum in strata(robustness, 0.5):
        assert len(set(training) & set(stratum)) == round(fraction * len(stratum))
    assert len(training) + len(heldout) == len(robustness)


def test_a_split_with_an_empty_side_is_refused():
    with pytest.raises(SplitError, match="empty"):
        stratified_grasp_split([1.0, 0.0], training_fraction=0.2)
    with pytest.raises(SplitError, match="training_fraction"):
        stratified_grasp_split(CUBE, training_fraction=1.0)


def test_stratified_subset_keeps_both_strata_and_proportions():
    training, _ = stratified_grasp_split(CUBE, seed=0)
    two = stratified_subset(training, CUBE, 2)
    assert len(two) == 2 and set(two) <= set(training)
    assert sorted(CUBE[two] >= 0.5) == [False, True]
    six = stratified_subset(training, CUBE, 6)  # 10 robust + 2 not: 1 + 1 each, then 4 by share 9:1
    assert np.sum(CUBE[six] >= 0.5) == 5 and np.sum(CUBE[six] < 0.5) == 1
    assert np.array_equal(stratified_subset(training, CUBE, 0), training)
    assert np.array_equal(stratified_subset(training, CUBE, 100), training)
    assert np.array_equal(stratified_subset(training, CUBE, 5, seed=1), stratified_subset(training, CUBE, 5, seed=1))


def test_object_split_follows_the_registry_with_several_objects():
    registry = load_registry()
    training, heldout = object_split(["vase", "mug", "cat", "pear", "book"], registry)
    assert training == ["cat", "pear", "vase"] and heldout == ["book", "mug"]
    assert object_split(["cube_3cm"], registry) == (["cube_3cm"], ["cube_3cm"])
    with pytest.raises(SplitError, match="no held-out object"):
        object_split(["cat", "pear"], registry)
    with pytest.raises(SplitError, match="not in the object registry"):
        object_split(["cat", "teapot"], registry)


def test_make_split_by_grasp_and_by_object():
    registry = load_registry()
    split = make_split({"cube_3cm": CUBE}, registry, seed=0, max_training_grasps=2, max_heldout_grasps=2)
    assert split["kind"] == "grasp"
    train, held = split["training"]["cube_3cm"], split["heldout"]["cube_3cm"]
    assert len(train) == len(held) == 2 and not set(train) & set(held)
    assert "seed 0" in split["description"] and ", ".join(map(str, train)) in split["description"]
    json.dumps(split)  # plain JSON types only

    by_object = make_split({"cat": CUBE[:5], "mug": CUBE[5:10], "pear": CUBE[10:15]},
                           {**registry, "mug": ObjectInfo("mug", 0.02, "heldout", "reach")})
    assert by_object["kind"] == "object"
    assert set(by_object["training"]) == {"cat", "pear"} and set(by_object["heldout"]) == {"mug"}
    assert by_object["training"]["cat"] == [0, 1, 2, 3, 4]
    assert "Split by object" in by_object["description"]


def test_load_split_round_trip_and_rejection(tmp_path):
    split = make_split({"cube_3cm": CUBE}, load_registry())
    path = tmp_path / "split.json"
    path.write_text(json.dumps(split))
    assert load_split(path) == split
    path.write_text(json.dumps({"training": []}))
    with pytest.raises(SplitError, match="not a study split"):
        load_split(path)
