#!/usr/bin/python3
"""`import attnlab` against the notebook workflow it replaces and against the CLI, side by
side on one machine (issue 49's measurements).

1. The same work three ways on the same 4 images (bench_peer.py's four: two photos, the demo
   image, one Fashion-MNIST image), DeiT-small shape, random weights, maps + rank + spectra
   with the query, CLS and rank figures as PNG (100 dpi) + PDF:
     peer     ../shared/peers/notebook_workflow.py (PyTorch hooks + numpy + matplotlib)
     example  examples/notebook_workflow.py (import attnlab)
     cli      attnlab report --figures layers_heads,prefix_maps,rank --complexity-scales none
   Each is the wall time of a whole process; runs alternate (peer, example, cli, peer, ...)
   and the table gives medians and ratios. Lines of user code: non-blank, non-comment lines.
2. The binding's overhead: a 196-token query map (deit_small's last layer, query (7, 7), the
   head mean) from Python (Traces.query_map, timeit) against the same C++ calls
   (bench_analysis --benchmark_filter=BM_QueryMap196), both in this run.

Usage: bench_python.py --attnlab build/app/attnlab --python-dir build/python
                       --bench build/bench/bench_analysis --peer ../shared/peers/notebook_workflow.py
                       [--repeats 3]
Not part of CI (minutes; the peer needs python3-torch, -torchvision, -matplotlib, -pil)."""
import argparse, datetime, json, os, platform, shutil, statistics, subprocess, sys, tempfile, time

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
ap = argparse.ArgumentParser()
ap.add_argument('--attnlab', required=True)
ap.add_argument('--python-dir', required=True)
ap.add_argument('--bench', required=True)
ap.add_argument('--peer', required=True)
ap.add_argument('--repeats', type=int, default=3)
a = ap.parse_args()

assets = os.path.join(root, 'assets')
images = [os.path.join(assets, 'photos', 'chelsea.png'), os.path.join(assets, 'photos', 'coffee.png'),
          os.path.join(assets, 'demo.png'),
          os.path.join(assets, 'fashion-mnist', sorted(os.listdir(os.path.join(assets, 'fashion-mnist')))[0])]
work = tempfile.mkdtemp(prefix='bench_python_')
env = dict(os.environ, PYTHONPATH=os.path.abspath(a.python_dir))
example = os.path.join(root, 'examples', 'notebook_workflow.py')


def out(name):
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    return d


commands = {
    'peer': lambda: ['/usr/bin/python3', a.peer, *images, '--out', out('peer')],
    'example': lambda: ['/usr/bin/python3', example, *images, '--out', out('example')],
    'cli': lambda: [a.attnlab, 'report', '--models', 'deit_small_patch16_224', '--random-init',
                    '--images', *images, '--out', out('cli'), '--analyses', 'maps,rank,spectra',
                    '--query', '7,7', '--figures', 'layers_heads,prefix_maps,rank',
                    '--formats', 'png,pdf', '--dpi', '100', '--complexity-scales', 'none'],
}
times = {k: [] for k in commands}
for rep in range(a.repeats):
    for name, cmd in commands.items():
        t = time.perf_counter()
        r = subprocess.run(cmd(), env=env, capture_output=True, text=True)
        times[name].append(time.perf_counter() - t)
        if r.returncode:
            sys.exit(f'{name} failed ({r.returncode}):\n{r.stderr[-2000:]}')
    print(f'repeat {rep + 1}/{a.repeats} done', file=sys.stderr)
med = {k: statistics.median(v) for k, v in times.items()}


def code_lines(path):
    """Non-blank lines outside comments and the module's docstring."""
    n = 0
    in_doc = False
    for line in open(path):
        s = line.strip()
        if s.count('"""') % 2 == 1:  # a docstring opens or closes on this line
            in_doc = not in_doc
            continue
        if in_doc or not s or s.startswith('#') or (s.startswith('"""') and s.endswith('"""')):
            continue
        n += 1
    return n


def figure_files(d):
    return sorted(f for f in os.listdir(d) if f.endswith(('.png', '.pdf')))


print(f'machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}')
print(f'date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; repeats: {a.repeats} (medians)')
print()
print('| 4 images, maps + rank + spectra, query/CLS/rank figures PNG + PDF | wall time | peer / this | this / CLI | lines of user code | figure files |')
print('| --- | --- | --- | --- | --- | --- |')
print(f'| notebook (`notebook_workflow.py`) | {med["peer"]:.2f} s | 1.00× | {med["peer"] / med["cli"]:.2f}× | '
      f'{code_lines(a.peer)} | {len(figure_files(os.path.join(work, "peer")))} |')
print(f'| `import attnlab` (`examples/notebook_workflow.py`) | {med["example"]:.2f} s | '
      f'{med["peer"] / med["example"]:.2f}× | {med["example"] / med["cli"]:.2f}× | {code_lines(example)} | '
      f'{len(figure_files(os.path.join(work, "example")))} |')
cli_figures = os.path.join(work, 'cli', 'figures')
print(f'| `attnlab report` (CLI) | {med["cli"]:.2f} s | {med["peer"] / med["cli"]:.2f}× | 1.00× | 1 command | '
      f'{len(figure_files(cli_figures))} |')

# 2. The binding's overhead on one query map.
probe = r'''
import timeit, numpy as np, attnlab
attnlab.set_threads(1)
m = attnlab.load("deit_small_patch16_224", random_init=True)
t = m.trace(np.random.default_rng(0).integers(0, 256, (224, 224, 3), dtype=np.uint8))
assert t.layers[-1]["grid"] == (14, 14)
f = lambda: t.query_map(layer=-1, query=(7, 7))
f()
n = 2000
print(min(timeit.repeat(f, number=n, repeat=5)) / n * 1e6)
'''
py_us = float(subprocess.run(['/usr/bin/python3', '-c', probe], env=env, capture_output=True, text=True,
                             check=True).stdout.strip())
bench = subprocess.run([a.bench, '--benchmark_filter=BM_QueryMap196', '--benchmark_format=json',
                        '--benchmark_repetitions=5', '--benchmark_min_time=0.5'],
                       env=dict(os.environ, ATTNLAB_THREADS='1', OMP_NUM_THREADS='1'),
                       capture_output=True, text=True, check=True)
runs = [b['real_time'] for b in json.loads(bench.stdout)['benchmarks'] if b.get('run_type') == 'iteration']
cpp_us = min(runs)
print()
print('| one 196-token query map (deit_small, last layer, head mean), 1 thread | µs per call |')
print('| --- | --- |')
print(f'| C++ (`bench_analysis` BM_QueryMap196, best of 5) | {cpp_us:.1f} |')
print(f'| Python `Traces.query_map` (timeit, best of 5 × 2000) | {py_us:.1f} |')
print(f'| Python / C++ | {py_us / cpp_us:.2f}× |')
shutil.rmtree(work, ignore_errors=True)
