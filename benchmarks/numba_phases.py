"""Timing numba's compilation from inside the process that compiles: the compilations as numba's
compiler events report them, and the phases of compiling (numba's lowering, LLVM's passes) by
patching numba internals (numba 0.68). All times are CPU s of this process (time.process_time).

For the child processes of bench_compile.py and bench_cold_start.py, which put this folder on
sys.path; importing it imports numba.
"""

import time

from numba.core import codegen, event, lowering

# The numba methods `time_phases` times: lowering to LLVM IR, LLVM parsing the IR, LLVM's
# function passes, LLVM's optimisation of a library's final module, LLVM emitting a library's
# machine code; each as (module, class, method, timed per library).
PHASES = {
    "lowering": (lowering, "BaseLower", "lower", False),
    "parsing": (codegen, "CPUCodeLibrary", "add_ir_module", False),
    "function passes": (codegen, "CPUCodeLibrary", "_optimize_functions", False),
    "final module": (codegen, "CPUCodeLibrary", "_optimize_final_module", True),
    "machine code": (codegen, "JITCodeLibrary", "_finalize_specific", True),
}


class Clock:
    """Frames of CPU time that nest: a frame's exclusive time leaves out the frames opened and
    closed inside it."""

    def __init__(self):
        self.frames = []  # per open frame: [start CPU s, CPU s of the frames closed inside it]

    def push(self):
        self.frames.append([time.process_time(), 0.0])

    def pop(self):
        """Close the innermost open frame; returns its (inclusive, exclusive) CPU s."""
        start, nested = self.frames.pop()
        spent = time.process_time() - start
        if self.frames:
            self.frames[-1][1] += spent
        return spent, spent - nested


class Compilations(event.Listener):
    """numba's compilations in the order they end, as dicts: module and name of the function,
    args (its argument types, as text), inclusive and exclusive CPU s (exclusive: less the
    compilations of callees nested in it), and entry: whether it was compiled for a call from
    Python rather than inside another compilation. `register()` starts listening."""

    def __init__(self):
        self.open = Clock()
        self.done = []

    def register(self):
        event.register("numba:compile", self)
        return self

    def on_start(self, ev):
        self.open.push()

    def on_end(self, ev):
        function = ev.data["dispatcher"].py_func
        inclusive, exclusive = self.open.pop()
        self.done.append({"module": function.__module__, "name": function.__name__,
                          "args": [str(a) for a in ev.data["args"]], "inclusive": inclusive,
                          "exclusive": exclusive, "entry": not self.open.frames})


def _time_method(owner, name, label, phases, clock, per_library=False):
    """Patch method `name` of class `owner` to add its exclusive CPU s on `clock` to
    phases[label], or with per_library to phases[(label, last part of the library's name)]."""
    original = getattr(owner, name)

    def call(self, *args, **kwargs):
        clock.push()
        try:
            return original(self, *args, **kwargs)
        finally:
            key = (label, self.name.rsplit(".", 1)[-1]) if per_library else label
            phases[key] = phases.get(key, 0.0) + clock.pop()[1]
    setattr(owner, name, call)


def time_phases(labels, phases, clock):
    """_time_method for every phase of PHASES, in its order, under labels[phase]. Raises
    AttributeError when this numba lacks one of them."""
    for phase, (module, owner, name, per_library) in PHASES.items():
        _time_method(getattr(module, owner), name, labels[phase], phases, clock, per_library)
