#!/usr/bin/env python3
"""Mean time to interrupt (MTTI) of a replicated job under two survival rules.

A job of N logical ranks runs every rank as r replica processes; every
process fails independently after an exponential time with rate lambda (its
mean time between failures is 1/lambda). A *survival rule* says, for a set
of dead processes, whether the job can still complete:

- ``replica``: a death retires its whole replica (redio until issue 41): the
  job is interrupted once every replica has lost a process;
- ``rank``: the job is interrupted once some logical rank has lost all r
  replicas (rMPI's rule, Ferreira et al., SC11).

The script computes each rule's MTTI in two independent ways: by Monte Carlo,
replaying random failure orders through the rule itself (a predicate on the
dead set), and in closed form (replica: H_r / (N lambda); rank: the integral
of (1 - (1 - e^-t)^r)^N, about sqrt(pi) / (2 sqrt(N)) at r = 2). ``--check``
compares the two and exits non-zero on a disagreement (tests/survival_model.rs
runs it); ``--plot FILE`` draws MTTI against N, in units of a plain run's
MTTI 1/(N lambda); ``--table`` prints the figures docs/fault-tolerance.md
quotes.
"""

import argparse
import math
import sys

import numpy as np


def survives_replica_rule(dead, ranks, replicas):
    """True while some replica has lost no process."""
    lost_replicas = {replica for (_, replica) in dead}
    return len(lost_replicas) < replicas


def survives_rank_rule(dead, ranks, replicas):
    """True while every logical rank has a live replica."""
    losses = {}
    for rank, _ in dead:
        losses[rank] = losses.get(rank, 0) + 1
    return all(count < replicas for count in losses.values())


RULES = {"replica": survives_replica_rule, "rank": survives_rank_rule}


def monte_carlo_mtti(rule, ranks, replicas, trials, rng):
    """MTTI in units of 1/lambda: replays each trial's deaths in time order
    through the rule and returns the mean time of the interrupting death."""
    survives = RULES[rule]
    total = 0.0
    for _ in range(trials):
        times = rng.exponential(1.0, size=(ranks, replicas))
        order = np.argsort(times, axis=None)
        dead = set()
        for flat in order:
            rank, replica = divmod(int(flat), replicas)
            dead.add((rank, replica))
            if not survives(dead, ranks, replicas):
                total += times[rank, replica]
                break
    return total / trials


def closed_form_mtti(rule, ranks, replicas):
    """MTTI in units of 1/lambda, from the distribution of the interrupt time."""
    if rule == "replica":
        # Each replica dies at its first death (rate N); the job at the last.
        return sum(1.0 / k for k in range(1, replicas + 1)) / ranks
    # P(job alive at t) = P(every rank alive) = (1 - (1 - e^-t)^r)^N.
    # Integrated on a grid fine enough where the survival curve falls.
    scale = closed_form_rank_asymptote(ranks, replicas)
    t = np.linspace(0.0, 40.0 * scale, 400_001)
    alive = (1.0 - (1.0 - np.exp(-t)) ** replicas) ** ranks
    integrate = getattr(np, "trapezoid", None) or np.trapz  # numpy 2 renamed it
    return float(integrate(alive, t))


def closed_form_rank_asymptote(ranks, replicas):
    """Large-N approximation of the rank rule's MTTI: with e^-t ~ 1 - t,
    P(alive) ~ exp(-N t^r), whose integral is Gamma(1 + 1/r) / N^(1/r)."""
    return math.gamma(1.0 + 1.0 / replicas) / ranks ** (1.0 / replicas)


def check(trials, seed):
    """Monte Carlo against closed form, within 4 standard errors."""
    rng = np.random.default_rng(seed)
    failures = 0
    for ranks in (1, 2, 8, 64):
        for replicas in (2, 3):
            for rule in RULES:
                exact = closed_form_mtti(rule, ranks, replicas)
                sampled = monte_carlo_mtti(rule, ranks, replicas, trials, rng)
                # The interrupt time's spread is at most of the order of its
                # mean (a maximum or minimum of exponentials).
                tolerance = 4.0 * exact / math.sqrt(trials)
                ok = abs(sampled - exact) <= tolerance
                failures += not ok
                print(
                    f"{'ok ' if ok else 'BAD'} rule={rule:<7} N={ranks:<3} r={replicas} "
                    f"closed={exact:.5f} monte-carlo={sampled:.5f} tolerance={tolerance:.5f}"
                )
    # The figure: at r=2 the rank rule gives sqrt(pi N)/3 times the
    # replica rule's MTTI for large N; the approximation's error falls as
    # 1/sqrt(N) (6 % at N=100).
    for ranks in (100, 1000, 10000):
        ratio = closed_form_mtti("rank", ranks, 2) / closed_form_mtti("replica", ranks, 2)
        expected = math.sqrt(math.pi * ranks) / 3.0
        ok = abs(ratio / expected - 1.0) < 1.0 / math.sqrt(ranks)
        failures += not ok
        print(f"{'ok ' if ok else 'BAD'} N={ranks} r=2 rank/replica={ratio:.2f} sqrt(pi N)/3={expected:.2f}")
    return failures


def table(sizes):
    """Rows: N, then MTTI / plain run's MTTI for each rule and degree."""
    print("| N | replica rule, r=2 | rank rule, r=2 | gain | replica rule, r=3 | rank rule, r=3 | gain |")
    print("|---|---|---|---|---|---|---|")
    for ranks in sizes:
        row = [f"{ranks:,}"]
        for replicas in (2, 3):
            unit = closed_form_mtti("replica", ranks, replicas) * ranks
            rank = closed_form_mtti("rank", ranks, replicas) * ranks
            row += [f"{unit:.2f}x", f"{rank:.1f}x", f"{rank / unit:.1f}x"]
        print("| " + " | ".join(row) + " |")


def plot(path, sizes):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for replicas, style in ((2, "-"), (3, "--")):
        for rule, colour, label in (
            ("replica", "tab:red", "a death retires its replica"),
            ("rank", "tab:blue", "a rank dies with its last replica"),
        ):
            gains = [closed_form_mtti(rule, n, replicas) * n for n in sizes]
            ax.plot(sizes, gains, style, color=colour, label=f"{label}, r={replicas}")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("logical ranks N (one process fails at rate λ)")
    ax.set_ylabel("mean time to interrupt / plain run's 1/(Nλ)")
    ax.set_title("Replicated job: mean time to interrupt by survival rule")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="Monte Carlo against closed form")
    parser.add_argument("--trials", type=int, default=4000, help="Monte Carlo trials per point")
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--table", action="store_true", help="markdown table of the gains")
    parser.add_argument("--plot", metavar="PNG", help="plot MTTI against N")
    args = parser.parse_args()
    sizes = [1, 2, 4, 10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000]
    failures = 0
    if args.check:
        failures = check(args.trials, args.seed)
    if args.table:
        table([2, 10, 100, 1000, 10000, 100000])
    if args.plot:
        plot(args.plot, sizes)
    if not (args.check or args.table or args.plot):
        parser.print_help()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
