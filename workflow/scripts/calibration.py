"""Psi_th calibration: results/calibration/squeeze.nc and psi_th.json (snakemake script)."""

import sys

from ipcgrasp.io import write_json_atomic
from ipcgrasp.study.cube import write_netcdf_atomic
from ipcgrasp.study.provenance import provenance_attrs
from ipcgrasp.study.runs import study_params

sm = snakemake  # noqa: F821
sys.stdout = sys.stderr = open(sm.log[0], "w", buffering=1)
from ipcgrasp.study.calibration import calibrate  # noqa: E402 - after the log redirect, so import errors land in it

params = study_params(sm.params.sim, jaw=sm.params.jaw)
squeeze = calibrate(sm.params.E, params.close_force, params, progress=lambda E: print(f"squeezed E = {E:g} Pa"),
                    gripper=sm.params.gripper)
squeeze.attrs.update(provenance_attrs(sm.config, sm.config["seed"]))
write_netcdf_atomic(squeeze, sm.output.squeeze)
table = {"E": squeeze.E.values.tolist(), "psi_th": squeeze.psi_th.values.tolist(),
         "close_force": params.close_force, "jaw": params.jaw, "gripper": sm.params.gripper}
write_json_atomic(sm.output.psi_th, table)
print(table)
