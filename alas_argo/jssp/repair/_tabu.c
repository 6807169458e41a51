/* The tabu search behind LCRP's optional tabu first edit (alas_argo/jssp/repair/tabu.py).
 *
 * Why C: LCRP's first edit (AOR or the re-dispatched plan) is 2-10 % above the lower bound on 20x15 disruptions
 * and the CP-SAT stages need most of the repair's time to close that gap. A tabu search over the free
 * operations' machine sequences closes most of it in 10,000 iterations, but only at compiled speed (about 5 us
 * an iteration on 200 free operations here; the Python search of 2026-12-03 ran 2,300 iterations a second).
 * A plain CPython extension, not numba: no runtime dependency, no JIT start-up per process (numba cost 0.6 CPU s
 * per process before its first iteration, twice a median repair), and it is optional at install: without a
 * compiler LCRP keeps its re-dispatch first edit (setup.py, tabu.py).
 *
 * The plan is held as tabu.py's FreeSequences holds it: per machine, the free operations in order; frozen
 * operations folded into each operation's release and into a floor no plan ends before; downtimes per machine,
 * which an operation may not overlap (it starts after one it would). Times are re-computed exactly for every
 * move evaluated, by the same semi-active pass as FreeSequences.evaluate, so the makespan returned is the one
 * Python computes for the sequences returned (tests/jssp/repair/test_tabu.py checks it).
 *
 * Search (as the h-tabu probe of issue 17 measured it, bench/README.md): moves on one critical path, N7-style (swap the
 * first and last two operations of each block; move an interior operation to the block's front or back; move
 * the block's first operation behind, or its last one ahead of, each other one). Moves are ranked by a cheap
 * estimate (heads of the moved segment recomputed, tails of a backward pass without downtimes) and only the best
 * one that is allowed is evaluated exactly (cyclic ones are skipped). A move that puts back a pair a recent move
 * reversed is tabu for 8-14 iterations unless it beats the best makespan. After STALL_LIMIT iterations without a
 * shorter plan the search returns to the best plan, clears the tabu list and makes KICK random critical moves.
 * Its randomness is a splitmix64 stream from the caller's seed, so a seed gives one answer on every machine.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef int64_t i64;

#define TENURE_MIN 8
#define TENURE_MAX 14
/* Tenure 10-20 and a back-jump after 1,000 idle iterations were measured no better (the h-tabu probe). */
#define STALL_LIMIT 3000
#define KICK 3
/* Ties in the estimate are broken at random: the estimate is scaled by this and a random remainder added. */
#define TIE_SCALE 1024
/* The caller's iteration counts stay far below this, so tabu deadlines fit in 32 bits (the n*n tabu table is
 * the search's largest allocation: 16 MB at 2,000 operations). */
#define MAX_ITERATIONS 1000000000LL

typedef struct {
    i64 n, m;
    const i64 *dur, *mach, *rel, *jpred, *jsucc, *moff, *dlo, *dhi, *doff;
    i64 floor;
} Problem;

/* Scratch for one search: every array sized once, so an iteration allocates nothing. */
typedef struct {
    i64 *start, *earliest, *indeg, *queue, *tail, *path, *seg, *head;
    i64 *move_from, *move_to, *key, *order;
    int32_t *tabu; /* tabu[x * n + y] > iteration: x may not be placed before y again yet */
    uint64_t rng;
} Work;

static uint64_t next_random(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static i64 random_below(uint64_t *state, i64 bound) { return (i64)(next_random(state) % (uint64_t)bound); }

/* The least start at or after `at` at which an operation of `duration` overlaps no downtime of `machine`.
 * Passes repeat until nothing moves, as FreeSequences._fit does, so the order of the downtimes cannot matter. */
static i64 fit(const Problem *p, i64 machine, i64 at, i64 duration) {
    int moved = duration > 0;
    while (moved) {
        moved = 0;
        for (i64 k = p->doff[machine]; k < p->doff[machine + 1]; k++)
            if (at < p->dhi[k] && p->dlo[k] < at + duration) {
                at = p->dhi[k];
                moved = 1;
            }
    }
    return at;
}

/* Earliest starts of the sequences `seq` (positions `pos`) into w->start; the topological order is left in
 * w->queue for the tails. Returns 0 when the sequences are cyclic, else 1 with the makespan and the sum of job
 * completions (the tie-break between plans of one makespan) in *makespan and *completion. */
static int evaluate(const Problem *p, const i64 *seq, const i64 *pos, Work *w, i64 *makespan, i64 *completion) {
    i64 n = p->n, first = 0, last = 0, end_max = p->floor, done_sum = 0;
    for (i64 i = 0; i < n; i++) {
        w->indeg[i] = (p->jpred[i] >= 0) + (pos[i] > p->moff[p->mach[i]]);
        w->earliest[i] = p->rel[i];
        if (w->indeg[i] == 0) w->queue[last++] = i;
    }
    while (first < last) {
        i64 i = w->queue[first++], machine = p->mach[i];
        i64 s = fit(p, machine, w->earliest[i], p->dur[i]), e = s + p->dur[i];
        w->start[i] = s;
        if (e > end_max) end_max = e;
        i64 next_in_job = p->jsucc[i];
        if (next_in_job >= 0) {
            if (e > w->earliest[next_in_job]) w->earliest[next_in_job] = e;
            if (--w->indeg[next_in_job] == 0) w->queue[last++] = next_in_job;
        } else {
            done_sum += e;
        }
        if (pos[i] + 1 < p->moff[machine + 1]) {
            i64 next_on_machine = seq[pos[i] + 1];
            if (e > w->earliest[next_on_machine]) w->earliest[next_on_machine] = e;
            if (--w->indeg[next_on_machine] == 0) w->queue[last++] = next_on_machine;
        }
    }
    *makespan = end_max;
    *completion = done_sum;
    return first == n;
}

/* Move the operation at position `from` to position `to` of the same machine, shifting the ones between. */
static void shift(i64 *seq, i64 *pos, i64 from, i64 to) {
    i64 moved = seq[from];
    if (from < to)
        for (i64 k = from; k < to; k++) { seq[k] = seq[k + 1]; pos[seq[k]] = k; }
    else
        for (i64 k = from; k > to; k--) { seq[k] = seq[k - 1]; pos[seq[k]] = k; }
    seq[to] = moved;
    pos[moved] = to;
}

static void add_move(Work *w, i64 *count, i64 from, i64 to) {
    w->move_from[*count] = from;
    w->move_to[*count] = to;
    (*count)++;
}

/* The moves on one critical path of the evaluated plan (w->start): the path ends at an operation ending at the
 * makespan (the first such, or a random one when `pick_random`) and is followed back over tight arcs, the
 * machine predecessor first; it stops where an operation waits for its release, a downtime or a frozen
 * operation, which no move can shorten. Returns the number of moves. */
static i64 critical_moves(const Problem *p, const i64 *seq, const i64 *pos, i64 makespan, Work *w, int pick_random) {
    i64 end_op = -1, ties = 0;
    for (i64 i = 0; i < p->n; i++)
        if (w->start[i] + p->dur[i] == makespan) {
            ties++;
            if (pick_random ? random_below(&w->rng, ties) == 0 : end_op < 0) end_op = i;
        }
    if (end_op < 0) return 0; /* the plan ends with a frozen operation: nothing free is critical */
    i64 length = 0;
    for (i64 i = end_op; i >= 0;) {
        w->path[length++] = i;
        i64 s = w->start[i], before = -1;
        if (pos[i] > p->moff[p->mach[i]]) {
            i64 mp = seq[pos[i] - 1];
            if (w->start[mp] + p->dur[mp] == s) before = mp;
        }
        if (before < 0 && p->jpred[i] >= 0 && w->start[p->jpred[i]] + p->dur[p->jpred[i]] == s) before = p->jpred[i];
        i = before;
    }
    /* The path was collected from its end: walk it forwards, block by block (consecutive on one machine). */
    i64 count = 0;
    for (i64 k = length - 1; k >= 0; k--) {
        i64 block_end = k;
        while (block_end - 1 >= 0 && p->mach[w->path[block_end - 1]] == p->mach[w->path[k]]
               && pos[w->path[block_end - 1]] == pos[w->path[block_end]] + 1)
            block_end--;
        i64 first = pos[w->path[k]], last = pos[w->path[block_end]], size = last - first + 1;
        k = block_end;
        if (size < 2) continue;
        add_move(w, &count, first, first + 1);
        if (size < 3) continue;
        add_move(w, &count, last - 1, last);
        for (i64 q = first + 1; q < last; q++) {
            add_move(w, &count, q, first);
            add_move(w, &count, q, last);
        }
        for (i64 q = first + 2; q <= last; q++) add_move(w, &count, first, q);
        for (i64 q = first; q < last - 1; q++) add_move(w, &count, last, q);
    }
    return count;
}

/* Whether moving seq[from] to `to` would put back an order a recent move reversed. */
static int is_tabu(const Problem *p, const i64 *seq, const Work *w, i64 from, i64 to, i64 iteration) {
    i64 u = seq[from];
    if (from < to) {
        for (i64 k = from + 1; k <= to; k++)
            if (w->tabu[seq[k] * p->n + u] > iteration) return 1;
    } else {
        for (i64 k = to; k < from; k++)
            if (w->tabu[u * p->n + seq[k]] > iteration) return 1;
    }
    return 0;
}

/* Before the move: forbid putting the moved operation back on its old side of each operation it passes. */
static void make_tabu(const Problem *p, const i64 *seq, Work *w, i64 from, i64 to, int32_t until) {
    i64 u = seq[from];
    if (from < to)
        for (i64 k = from + 1; k <= to; k++) w->tabu[u * p->n + seq[k]] = until;
    else
        for (i64 k = to; k < from; k++) w->tabu[seq[k] * p->n + u] = until;
}

/* Per operation, the longest path from its end to the plan's end, downtimes ignored: a backward pass over the
 * topological order evaluate left in w->queue. */
static void compute_tails(const Problem *p, const i64 *seq, const i64 *pos, Work *w) {
    for (i64 k = p->n - 1; k >= 0; k--) {
        i64 i = w->queue[k], longest = 0, js = p->jsucc[i];
        if (js >= 0) longest = p->dur[js] + w->tail[js];
        if (pos[i] + 1 < p->moff[p->mach[i] + 1]) {
            i64 ms = seq[pos[i] + 1], via = p->dur[ms] + w->tail[ms];
            if (via > longest) longest = via;
        }
        w->tail[i] = longest;
    }
}

/* A cheap estimate of the makespan after moving seq[from] to `to`: the moved segment's heads recomputed in its
 * new order from the current times outside it, its tails from the backward pass, the longest path through it.
 * Ranks the moves; only the chosen one is evaluated exactly. */
static i64 estimate(const Problem *p, const i64 *seq, const Work *w, i64 from, i64 to, i64 *seg, i64 *head) {
    i64 machine = p->mach[seq[from]], lo = from < to ? from : to, hi = from < to ? to : from, len = hi - lo + 1;
    if (from < to) {
        for (i64 k = 0; k < len - 1; k++) seg[k] = seq[from + 1 + k];
        seg[len - 1] = seq[from];
    } else {
        seg[0] = seq[from];
        for (i64 k = 1; k < len; k++) seg[k] = seq[to + k - 1];
    }
    i64 ready = 0;
    if (lo > p->moff[machine]) ready = w->start[seq[lo - 1]] + p->dur[seq[lo - 1]];
    for (i64 k = 0; k < len; k++) {
        i64 x = seg[k], h = p->rel[x], jp = p->jpred[x];
        if (jp >= 0 && w->start[jp] + p->dur[jp] > h) h = w->start[jp] + p->dur[jp];
        if (ready > h) h = ready;
        head[k] = h;
        ready = h + p->dur[x];
    }
    i64 after = 0, longest = 0;
    if (hi + 1 < p->moff[machine + 1]) after = p->dur[seq[hi + 1]] + w->tail[seq[hi + 1]];
    for (i64 k = len - 1; k >= 0; k--) {
        i64 x = seg[k], t = after, js = p->jsucc[x];
        if (js >= 0 && p->dur[js] + w->tail[js] > t) t = p->dur[js] + w->tail[js];
        if (head[k] + p->dur[x] + t > longest) longest = head[k] + p->dur[x] + t;
        after = p->dur[x] + t;
    }
    return longest;
}

/* Evaluate seq with seq[from] moved to `to`, and put it back. Returns whether the result is acyclic. */
static int try_move(const Problem *p, i64 *seq, i64 *pos, Work *w, i64 from, i64 to, i64 *makespan, i64 *completion) {
    shift(seq, pos, from, to);
    int ok = evaluate(p, seq, pos, w, makespan, completion);
    shift(seq, pos, to, from);
    return ok;
}

/* The search proper; seq/pos hold the start and are worked on, best receives the best sequence found.
 * Returns the iterations made; *best_makespan holds the start's makespan on entry and the best one on exit. */
static i64 run(const Problem *p, i64 *seq, i64 *pos, i64 *best, Work *w, i64 iterations, i64 bound, i64 *best_makespan) {
    i64 n = p->n, makespan, completion, best_completion;
    evaluate(p, seq, pos, w, best_makespan, &best_completion);
    memcpy(best, seq, sizeof(i64) * n);
    i64 it = 0, idle = 0;
    for (; it < iterations && *best_makespan > bound; it++) {
        evaluate(p, seq, pos, w, &makespan, &completion);
        i64 count = critical_moves(p, seq, pos, makespan, w, 0);
        if (count == 0) break;
        compute_tails(p, seq, pos, w);
        /* Insertion sort by the estimate: a handful of moves per block, and the order must be reproducible. */
        for (i64 k = 0; k < count; k++) {
            w->key[k] = estimate(p, seq, w, w->move_from[k], w->move_to[k], w->seg, w->head) * TIE_SCALE
                        + random_below(&w->rng, TIE_SCALE);
            i64 j = k;
            for (; j > 0 && w->key[w->order[j - 1]] > w->key[k]; j--) w->order[j] = w->order[j - 1];
            w->order[j] = k;
        }
        i64 chosen = -1, chosen_makespan = 0, chosen_completion = 0, fallback = -1;
        for (i64 r = 0; r < count && chosen < 0; r++) {
            i64 k = w->order[r], from = w->move_from[k], to = w->move_to[k];
            int tabu = is_tabu(p, seq, w, from, to, it);
            /* Aspiration: a tabu move is allowed only when it beats the best plan; its estimate says whether
             * it can, before the exact evaluation is paid for. */
            if (tabu && w->key[k] / TIE_SCALE >= *best_makespan) {
                if (fallback < 0) fallback = k;
                continue;
            }
            if (!try_move(p, seq, pos, w, from, to, &makespan, &completion)) continue;
            if (tabu && makespan >= *best_makespan) {
                if (fallback < 0) fallback = k;
                continue;
            }
            chosen = k;
            chosen_makespan = makespan;
            chosen_completion = completion;
        }
        /* Every move tabu: the best-ranked one all the same, or the search would stop at a local optimum. */
        if (chosen < 0 && fallback >= 0
            && try_move(p, seq, pos, w, w->move_from[fallback], w->move_to[fallback], &makespan, &completion)) {
            chosen = fallback;
            chosen_makespan = makespan;
            chosen_completion = completion;
        }
        if (chosen < 0) break;
        i64 from = w->move_from[chosen], to = w->move_to[chosen];
        make_tabu(p, seq, w, from, to, (int32_t)(it + TENURE_MIN + random_below(&w->rng, TENURE_MAX - TENURE_MIN + 1)));
        shift(seq, pos, from, to);
        if (chosen_makespan < *best_makespan || (chosen_makespan == *best_makespan && chosen_completion < best_completion)) {
            idle = chosen_makespan < *best_makespan ? 0 : idle + 1;
            *best_makespan = chosen_makespan;
            best_completion = chosen_completion;
            memcpy(best, seq, sizeof(i64) * n);
        } else {
            idle++;
        }
        if (idle < STALL_LIMIT) continue;
        /* Stuck: back to the best plan, a clean tabu list, and a few random critical moves to leave it. */
        memcpy(seq, best, sizeof(i64) * n);
        for (i64 k = 0; k < n; k++) pos[seq[k]] = k;
        memset(w->tabu, 0, sizeof(int32_t) * (size_t)(n * n));
        idle = 0;
        for (int kick = 0; kick < KICK; kick++) {
            evaluate(p, seq, pos, w, &makespan, &completion);
            i64 moves = critical_moves(p, seq, pos, makespan, w, 1);
            if (moves == 0) break;
            i64 k = random_below(&w->rng, moves);
            shift(seq, pos, w->move_from[k], w->move_to[k]);
            if (!evaluate(p, seq, pos, w, &makespan, &completion)) shift(seq, pos, w->move_to[k], w->move_from[k]);
        }
    }
    return it;
}

/* ---- the Python binding ------------------------------------------------------------------------------------ */

#define N_ARRAYS 10
static const char *const ARRAY_NAMES[N_ARRAYS] = {"durations", "machines", "releases", "job_pred", "job_succ",
                                                 "machine_offsets", "sequence", "down_lo", "down_hi", "down_offsets"};

static i64 length_of(const Py_buffer *b) { return (i64)(b->len / (Py_ssize_t)sizeof(i64)); }

/* Refuse anything that could make the search read or write out of bounds; the message names the array. */
static int check_inputs(Py_buffer *b, i64 *n_out, i64 *m_out) {
    for (int k = 0; k < N_ARRAYS; k++)
        if (b[k].len % (Py_ssize_t)sizeof(i64) != 0) {
            PyErr_Format(PyExc_ValueError, "%s: not a buffer of 64-bit integers", ARRAY_NAMES[k]);
            return 0;
        }
    const i64 *dur = b[0].buf, *mach = b[1].buf, *jpred = b[3].buf, *jsucc = b[4].buf, *moff = b[5].buf,
              *seq = b[6].buf, *dlo = b[7].buf, *dhi = b[8].buf, *doff = b[9].buf;
    i64 n = length_of(&b[0]), m = length_of(&b[5]) - 1, nd = length_of(&b[7]);
    if (m < 0 || length_of(&b[9]) != m + 1 || length_of(&b[8]) != nd) {
        PyErr_SetString(PyExc_ValueError, "offsets: machine_offsets and down_offsets need one entry per machine plus one");
        return 0;
    }
    for (int k = 1; k < 7; k++)
        if (k != 5 && length_of(&b[k]) != n) {
            PyErr_Format(PyExc_ValueError, "%s: %lld entries, expected %lld", ARRAY_NAMES[k], (long long)length_of(&b[k]),
                         (long long)n);
            return 0;
        }
    if (moff[0] != 0 || moff[m] != n || doff[0] != 0 || doff[m] != nd) {
        PyErr_SetString(PyExc_ValueError, "offsets: must run from 0 to the number of operations / downtimes");
        return 0;
    }
    for (i64 k = 0; k < m; k++)
        if (moff[k] > moff[k + 1] || doff[k] > doff[k + 1]) {
            PyErr_SetString(PyExc_ValueError, "offsets: must not decrease");
            return 0;
        }
    for (i64 i = 0; i < n; i++)
        if (dur[i] < 0 || mach[i] < 0 || mach[i] >= m || jpred[i] < -1 || jpred[i] >= n || jsucc[i] < -1 || jsucc[i] >= n) {
            PyErr_Format(PyExc_ValueError, "operation %lld: duration, machine or job neighbour out of range", (long long)i);
            return 0;
        }
    for (i64 k = 0; k < nd; k++)
        if (dlo[k] > dhi[k]) {
            PyErr_SetString(PyExc_ValueError, "down_lo/down_hi: a downtime ends before it starts");
            return 0;
        }
    /* The sequence: a permutation, each operation within its own machine's slots. */
    char *seen = PyMem_Calloc((size_t)(n > 0 ? n : 1), 1);
    if (seen == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    int ok = 1;
    for (i64 machine = 0; machine < m && ok; machine++)
        for (i64 k = moff[machine]; k < moff[machine + 1] && ok; k++) {
            i64 i = seq[k];
            ok = i >= 0 && i < n && !seen[i] && mach[i] == machine;
            if (ok) seen[i] = 1;
        }
    PyMem_Free(seen);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "sequence: not a permutation of the operations by machine");
        return 0;
    }
    *n_out = n;
    *m_out = m;
    return 1;
}

PyDoc_STRVAR(search_doc,
"search(durations, machines, releases, job_pred, job_succ, machine_offsets, sequence, down_lo, down_hi,\n"
"       down_offsets, floor, bound, iterations, seed) -> (sequence, makespan, iterations_made)\n\n"
"Tabu search over machine sequences from `sequence` (the free operations machine by machine, machine k in\n"
"slots machine_offsets[k]:machine_offsets[k+1]). Every array is a buffer of int64. Stops after `iterations`\n"
"iterations or at `bound`. Returns the best sequence found (bytes of int64), its makespan and the iterations\n"
"made. ValueError on inconsistent arrays or a cyclic start.");

static PyObject *search(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer b[N_ARRAYS];
    long long floor, bound, iterations;
    unsigned long long seed;
    memset(b, 0, sizeof(b));
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*LLLK:search", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6],
                          &b[7], &b[8], &b[9], &floor, &bound, &iterations, &seed))
        return NULL;
    PyObject *result = NULL;
    i64 n = 0, m = 0;
    i64 *memory = NULL;
    int32_t *tabu = NULL;
    if (iterations < 0 || iterations > MAX_ITERATIONS) {
        PyErr_Format(PyExc_ValueError, "iterations: must be in [0, %lld]", MAX_ITERATIONS);
        goto done;
    }
    if (!check_inputs(b, &n, &m)) goto done;
    /* Scratch: seq, pos, best and 8 per-operation arrays, then 4 arrays per move (at most 4 n + 8 moves). */
    i64 max_moves = 4 * n + 8;
    memory = PyMem_Malloc(sizeof(i64) * (size_t)(11 * n + 4 * max_moves + 1));
    tabu = PyMem_Calloc((size_t)(n * n > 0 ? n * n : 1), sizeof(int32_t));
    if (memory == NULL || tabu == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    i64 *seq = memory, *pos = seq + n, *best = pos + n;
    Work w = {.start = best + n, .tabu = tabu, .rng = (uint64_t)seed};
    w.earliest = w.start + n;
    w.indeg = w.earliest + n;
    w.queue = w.indeg + n;
    w.tail = w.queue + n;
    w.path = w.tail + n;
    w.seg = w.path + n;
    w.head = w.seg + n;
    w.move_from = w.head + n;
    w.move_to = w.move_from + max_moves;
    w.key = w.move_to + max_moves;
    w.order = w.key + max_moves;
    memcpy(seq, b[6].buf, sizeof(i64) * (size_t)n);
    for (i64 k = 0; k < n; k++) pos[seq[k]] = k;
    Problem p = {n, m, b[0].buf, b[1].buf, b[2].buf, b[3].buf, b[4].buf, b[5].buf, b[7].buf, b[8].buf, b[9].buf, floor};
    i64 makespan, completion, made;
    if (!evaluate(&p, seq, pos, &w, &makespan, &completion)) {
        PyErr_SetString(PyExc_ValueError, "sequence: the machine order contradicts the job order (cyclic)");
        goto done;
    }
    /* The buffers stay held (PyArg_ParseTuple's Py_buffer) while the GIL is released: searches in threads
     * run side by side. */
    Py_BEGIN_ALLOW_THREADS
    made = run(&p, seq, pos, best, &w, iterations, bound, &makespan);
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("(y#LL)", (const char *)best, (Py_ssize_t)(sizeof(i64) * (size_t)n), (long long)makespan,
                           (long long)made);
done:
    PyMem_Free(memory);
    PyMem_Free(tabu);
    for (int k = 0; k < N_ARRAYS; k++)
        if (b[k].obj != NULL) PyBuffer_Release(&b[k]);
    return result;
}

static PyMethodDef methods[] = {
    {"search", search, METH_VARARGS, search_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_tabu", "The compiled tabu search of LCRP's tabu first edit (see tabu.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

/* The project's modules declare their public API (tests/test_exports.py), this one too. */
PyMODINIT_FUNC PyInit__tabu(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    PyObject *names = Py_BuildValue("[s]", "search");
    if (names == NULL || PyModule_AddObject(m, "__all__", names) < 0) {
        Py_XDECREF(names);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
