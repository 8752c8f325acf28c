#!/usr/bin/python3
"""attnlab against the notebook workflow it replaces, side by side on one machine.

The peer is ../shared/peers/notebook_workflow.py (PyTorch + forward hooks + numpy +
matplotlib; DeiT-small shape, random weights). attnlab runs the same model shape
(deit_small_patch16_224 --random-init) with the same analyses (maps, rank, spectra) on the
same images. Every measurement is the wall time of a whole process, runs alternate between
the two tools (peer, attnlab, peer, ...) so that a machine's drift hits both, and the table
gives medians with the ratio peer / attnlab (> 1: attnlab is faster).

Usage: bench_peer.py --attnlab build/app/attnlab --peer ../shared/peers/notebook_workflow.py
                     [--repeats 3] [--work DIR] [--skip-32] [--checkpoint FILE.pth]
Not part of CI: it takes minutes and needs python3-torch, -torchvision, -matplotlib
(scripts/bench_peer.sh installs them)."""
import argparse, json, os, platform, shutil, statistics, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument('--attnlab', required=True)
ap.add_argument('--peer', required=True)
ap.add_argument('--assets', default=os.path.join(os.path.dirname(__file__), '..', '..', 'assets'))
ap.add_argument('--repeats', type=int, default=3)
ap.add_argument('--work', default='')
ap.add_argument('--skip-32', action='store_true')
# A real checkpoint (e.g. timm's deit_small_patch16_224 .pth): attnlab's fixed cost with it,
# opened with no flags (`analyze --model FILE`: recognition, then the load).
ap.add_argument('--checkpoint', default='')
a = ap.parse_args()

work = a.work or tempfile.mkdtemp(prefix='bench_peer_')
os.makedirs(work, exist_ok=True)
# The four images of the issue: two photos, the demo image, one Fashion-MNIST image.
sources = [os.path.join(a.assets, 'photos', 'chelsea.png'), os.path.join(a.assets, 'photos', 'coffee.png'),
           os.path.join(a.assets, 'demo.png'),
           os.path.join(a.assets, 'fashion-mnist', sorted(os.listdir(os.path.join(a.assets, 'fashion-mnist')))[0])]
sets = {}
for n, copies in ((1, 1), (4, 1), (8, 2), (32, 8)):
    d = os.path.join(work, f'images{n}')
    os.makedirs(d, exist_ok=True)
    chosen = sources[:1] if n == 1 else sources
    for c in range(copies):
        for s in chosen:
            stem, ext = os.path.splitext(os.path.basename(s))
            shutil.copy(s, os.path.join(d, f'{stem}_{c}{ext}'))
    sets[n] = d

def files(d):
    return sorted(os.path.join(d, f) for f in os.listdir(d))

ANALYSES = ['--analyses', 'maps,rank,spectra']
MODEL = ['--model', 'deit_small_patch16_224', '--random-init']

def peer(n, figures):
    figures = bool(figures)
    out = os.path.join(work, 'peer_out')
    shutil.rmtree(out, ignore_errors=True)
    return ['/usr/bin/python3', a.peer] + files(sets[n]) + ['--out', out] + ([] if figures else ['--no-figures'])

def ours(n, figures, formats='png,pdf'):
    out = os.path.join(work, 'attnlab_out')
    shutil.rmtree(out, ignore_errors=True)
    if figures:
        # The report as a user types it (its defaults); figures == 'macs' also asks for the
        # MAC-count figure (the model counted at 1x, 2x and 3x its input size), which the
        # notebook does not make and the report draws only when asked (issue 51).
        extra = ['--complexity-scales', '1,2,3'] if figures == 'macs' else []
        return [a.attnlab, 'report', '--models', 'deit_small_patch16_224', '--random-init', '--images', sets[n],
                '--out', out] + ANALYSES + ['--formats', formats, '--dpi', '100'] + extra
    return [a.attnlab, 'analyze'] + MODEL + ['--images', sets[n], '--out', out] + ANALYSES

def timed(cmd):
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f'failed ({r.returncode}): {" ".join(cmd)}\n{r.stderr[-2000:]}')
    return dt, r.stderr

cases = [('compute, 1 image', 1, False), ('compute, 4 images', 4, False), ('end to end with PNG+PDF figures, 4 images', 4, True),
         ('end to end, 4 images, attnlab also asked for its MAC-count figure', 4, 'macs')]
cases += [('compute, 8 images', 8, False)]
if not a.skip_32:
    cases += [('compute, 32 images', 32, False), ('end to end with PNG+PDF figures, 32 images', 32, True)]
times = {c[0]: {'peer': [], 'attnlab': []} for c in cases}
info = []
stages = {}
batched = []     # attnlab, 32 images, --batch 8 (the notebook has no batching)
checkpoint = []  # attnlab, 1 image, --model CHECKPOINT
for rep in range(a.repeats):
    for name, n, figures in cases:
        times[name]['peer'].append(timed(peer(n, figures))[0])
        dt, err = timed(ours(n, figures))
        times[name]['attnlab'].append(dt)
        if not figures:  # where attnlab's time went, from its own stage timer
            sidecar = [f for f in os.listdir(os.path.join(work, 'attnlab_out')) if f.endswith('_settings.json')]
            stages.setdefault(n, []).append(json.load(open(os.path.join(work, 'attnlab_out', sidecar[0])))['stage_seconds'])
    if not a.skip_32:
        batched.append(timed(ours(32, False) + ['--batch', '8'])[0])
    if a.checkpoint:
        out = os.path.join(work, 'attnlab_out')
        shutil.rmtree(out, ignore_errors=True)
        checkpoint.append(timed([a.attnlab, 'analyze', '--model', a.checkpoint, '--images', sets[1],
                                 '--out', out] + ANALYSES)[0])
    info.append(timed([a.attnlab, 'info'])[0])
    print(f'repeat {rep + 1}/{a.repeats} done', file=sys.stderr)

med = lambda xs: statistics.median(xs)
rows = []
for name, n, figures in cases:
    p, o = med(times[name]['peer']), med(times[name]['attnlab'])
    rows.append((name, p, o))
def row(name, p, o, unit='s'):
    print(f'| {name} | {p:.3f} {unit} | {o:.3f} {unit} | {p / o:.2f}× |')

print(f'machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}')
print(f'date: {time.strftime("%Y-%m-%d %H:%M %Z")}; repeats: {a.repeats} (medians); OPENBLAS_CORETYPE={os.environ.get("OPENBLAS_CORETYPE", "(auto)")}')
print()
print('| what | notebook | attnlab | notebook / attnlab |')
print('| --- | --- | --- | --- |')
for r in rows:
    row(*r)
per = {}
for tool in ('peer', 'attnlab'):
    t1, t4 = med(times['compute, 1 image'][tool]), med(times['compute, 4 images'][tool])
    per[tool] = (t4 - t1) / 3
    if not a.skip_32:
        per[tool + '32'] = (med(times['compute, 32 images'][tool]) - t1) / 31
row('compute per image (4 images − 1 image) / 3', per['peer'], per['attnlab'])
if not a.skip_32:
    row('compute per image (32 images − 1 image) / 31', per['peer32'], per['attnlab32'])
    for tool in ('peer', 'attnlab'):
        per[tool + 'fig'] = (med(times['end to end with PNG+PDF figures, 32 images'][tool]) -
                             med(times['end to end with PNG+PDF figures, 4 images'][tool])) / 28
    row('end to end per image (32 − 4 images) / 28', per['peerfig'], per['attnlabfig'])
for name, n, figures in cases:
    if not figures:
        p, o = med(times[name]['peer']), med(times[name]['attnlab'])
        print(f'| images/s, {name} (whole process) | {n / p:.2f} | {n / o:.2f} | {p / o:.2f}× |')
fixed_ours = med(times['compute, 1 image']['attnlab']) - per['attnlab']
print(f'| fixed cost (1 image − per image) | {med(times["compute, 1 image"]["peer"]) - per["peer"]:.3f} s | {fixed_ours:.3f} s | |')
print(f'| `attnlab info` (loading LibTorch) | | {med(info):.3f} s | |')
print(f'| attnlab fixed cost beyond `info` | | {fixed_ours - med(info):.3f} s | |')
if checkpoint:
    print(f'| attnlab, 1 image, `--model {os.path.basename(a.checkpoint)}` | | {med(checkpoint):.3f} s | |')
    print(f'| attnlab fixed cost beyond `info` with that checkpoint | | '
          f'{med(checkpoint) - per["attnlab"] - med(info):.3f} s | |')
if batched:
    p = med(times['compute, 32 images']['peer'])
    print(f'| compute, 32 images, attnlab `--batch 8` | {p:.3f} s | {med(batched):.3f} s | {p / med(batched):.2f}× |')
    print(f'| images/s, 32 images, attnlab `--batch 8` (whole process) | {32 / p:.2f} | {32 / med(batched):.2f} | |')
for n in sorted(stages):
    s = stages[n]
    f = med([x['forward'] for x in s]) / n
    an = med([x['analyses'] for x in s]) / n
    print(f'| attnlab stages, {n} image(s): forward with traces / analyses, per image | | {f:.3f} s / {an:.3f} s | |')

# Figure sizes: the peer's query figure against attnlab's layers x heads figure (72 panels).
subprocess.run(peer(1, True), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
subprocess.run(ours(1, True, 'png,pdf,svg'), stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL, check=True)
po = os.path.join(work, 'peer_out')
oo = os.path.join(work, 'attnlab_out', 'figures')
print()
print('| 72-panel layers × heads figure (1 image, 100 dpi PNG) | notebook | attnlab |')
print('| --- | --- | --- |')
for ext in ('pdf', 'svg', 'png'):
    pf = [f for f in os.listdir(po) if f.endswith('_query.' + ext)]
    of = [f for f in os.listdir(oo) if f.startswith('layers_heads__') and f.endswith('.' + ext)]
    ps = f'{os.path.getsize(os.path.join(po, pf[0])) / 1e6:.3f} MB' if pf else '—'
    os_ = f'{os.path.getsize(os.path.join(oo, of[0])) / 1e6:.3f} MB' if of else '—'
    print(f'| {ext.upper()} | {ps} | {os_} |')
