"""A console script for the tests that run it many times (snakemake's dry runs, ipcgrasp's
refusals of bad input), without paying its imports every time: conftest.ForkServer starts
`python fork_server.py SCRIPT MODULE:FUNCTION [PRELOAD ...]`, which imports MODULE and the PRELOAD
modules once, then reads one request a line on stdin (JSON: args, cwd, env, stdout, stderr: the
script's arguments, the folder it runs in, its environment, the files its output goes to) and
answers each with one line, {"returncode": N}.

For each request it forks a child that does what the console script SCRIPT does, sys.argv =
[SCRIPT, *args] and `sys.exit(FUNCTION())`, in that folder, with that environment, and ends as that
script would (its exit code, or an exception's traceback and 1). Every run is still a process of
its own that reads its files from scratch; only the modules are imported already. The server
forks from its one thread, and importing the modules starts no other."""

import importlib
import json
import os
import sys


def prepare(request: dict, script: str) -> None:
    """In the forked child: the request's folder, environment, output files and arguments."""
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, fd)
        os.close(out)
    sys.argv = [script, *request["args"]]


if __name__ == "__main__":
    script, entry, *preload = sys.argv[1:]
    # the module search path the console script has: its own folder first, not this file's
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    module, function = entry.split(":")
    main = getattr(importlib.import_module(module), function)
    for name in preload:
        importlib.import_module(name)

    answers = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        answers.flush()
        sys.stderr.flush()
        child = os.fork()
        if child == 0:
            prepare(request, script)
            sys.exit(main())
        _, status = os.waitpid(child, 0)
        print(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}), file=answers, flush=True)
