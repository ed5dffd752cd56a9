import numpy as np
import pytest

from ipcgrasp.grasp.pad_squeeze import threshold_energy
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.study.calibration import calibrate


def test_threshold_energy_interpolates_in_log_force():
    force = np.array([0.0, 10.0, 40.0])
    energy = np.array([0.0, 1.0, 3.0])
    # 20 N is halfway between 10 and 40 N in log force
    assert threshold_energy(force, energy, 20.0) == pytest.approx(2.0)
    assert np.isnan(threshold_energy(force, energy, 50.0))


def test_squeeze_curves_and_psi_th_fall_with_stiffness():
    ds = calibrate([1e7, 1e8], close_force=20.0, params=SimParams())
    for i in range(2):
        force = ds.force.values[i][~np.isnan(ds.force.values[i])]
        energy = ds.strain_energy.values[i][~np.isnan(ds.strain_energy.values[i])]
        assert force.max() >= 20.0
        assert np.all(np.diff(force) >= -1e-9) and np.all(np.diff(energy) >= -1e-12)  # monotone squeeze
    psi = ds.psi_th.values
    # Psi = F^2 / (2 k) with k proportional to E for a linear pad: about 10x per decade of E.
    assert 3 < psi[0] / psi[1] < 30
    assert ds.psi_th.attrs["units"] == "J"
