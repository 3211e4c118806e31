// The Python script gdb runs for `edgemem record --inference-fn`; edgemem
// prepends the values it names in capitals (inference_probe.cc).
#include "record/inference_probe_script.h"

namespace edgemem {

const char* const kInferenceProbeScript = R"py(# The gdb probe of `edgemem record --inference-fn` (src/record/inference_probe.h).
# gdb runs the program (or is attached to it) in all-stop mode with a
# breakpoint at NAME's entry and one at each return address NAME's calls
# return to. Every breakpoint returns False from stop(): the program never
# stops for a user. While one thread is at a breakpoint every thread is
# stopped, so the probe takes the next number of the preload library's
# sequence counter (edgemem_record_seq) as a record would: read it, write it
# back plus one. Each mark is one whole line appended to MARKS at once.
import os

import gdb

out = os.open(MARKS, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
seq_at = None
active = {}     # tid -> (sp at the outermost call's entry, sp when it returns, inference index)
named = set()   # tids whose THREAD mark is written
returns = {}    # return address -> its breakpoint
inferences = 0


def take_seq():
    global seq_at
    inferior = gdb.selected_inferior()
    if seq_at is None:
        seq_at = int(gdb.parse_and_eval("(unsigned long) &edgemem_record_seq"))
    seq = int.from_bytes(inferior.read_memory(seq_at, 8).tobytes(), "little") + 1
    inferior.write_memory(seq_at, seq.to_bytes(8, "little"))
    return seq


def mark(kind, tid, index):
    if tid not in named:
        named.add(tid)
        name = gdb.selected_thread().name or ""
        os.write(out, ("T %d %d %s\n" % (tid, take_seq(), name.replace("\n", " "))).encode())
    os.write(out, ("%s %d %d %d\n" % (kind, tid, take_seq(), index)).encode())


def word(address):
    size = gdb.lookup_type("unsigned long").sizeof
    return int.from_bytes(gdb.selected_inferior().read_memory(address, size).tobytes(), "little")


class Return(gdb.Breakpoint):
    def stop(self):
        tid = gdb.selected_thread().ptid[1]
        call = active.get(tid)
        # Only the outermost call's own return: a recursive call returns to
        # an address inside NAME, and another thread's sp differs.
        if call and int(gdb.selected_frame().read_register("sp")) == call[1]:
            del active[tid]
            mark("E", tid, call[2])
        return False


class Entry(gdb.Breakpoint):
    def stop(self):
        global inferences
        tid = gdb.selected_thread().ptid[1]
        frame = gdb.selected_frame()
        sp = int(frame.read_register("sp"))
        call = active.get(tid)
        if call and sp < call[0]:
            return False  # nested in the thread's outermost call: counted once
        if call:
            # Not below the outermost call's entry: that call never returned
            # normally (longjmp, an exception): it ends here.
            del active[tid]
            mark("E", tid, call[2])
        # x86-64 pushes the return address; AArch64 keeps it in x30.
        if ARCH == "x86_64":
            back, sp_after = word(sp), sp + 8
        else:
            back, sp_after = int(frame.read_register("x30")), sp
        inferences += 1
        active[tid] = (sp, sp_after, inferences)
        mark("B", tid, inferences)
        if back not in returns:
            returns[back] = Return("*%d" % back, internal=True)
            returns[back].silent = True
        return False


for setting in ("pagination off", "confirm off", "debuginfod enabled off", "startup-with-shell off",
                "disable-randomization off", "print thread-events off", "print inferior-events off"):
    gdb.execute("set " + setting)
gdb.execute("handle all nostop noprint pass")
gdb.execute("handle SIGINT nostop noprint pass")
entry = Entry("*" + SYMBOL, internal=True)
entry.silent = True
os.close(os.open(READY, os.O_WRONLY | os.O_CREAT, 0o600))  # edgemem waits for it with --pid

if ATTACH:
    # Until the process exits. edgemem asks to stop (Ctrl-C) by creating
    # STOP and sending the process a SIGINT, which gdb keeps from it: gdb
    # then detaches, and the process runs on without the breakpoints. A
    # SIGINT of its own is passed on.
    gdb.execute("handle SIGINT stop print nopass")
    last_stop = [None]
    gdb.events.stop.connect(lambda event: last_stop.__setitem__(0, event))
    resume = "continue"
    while gdb.selected_inferior().pid:
        last_stop[0] = None
        try:
            gdb.execute(resume)
        except (gdb.error, KeyboardInterrupt):
            pass
        if not gdb.selected_inferior().pid:
            break
        if os.path.exists(STOP):
            gdb.execute("detach")
            break
        interrupted = isinstance(last_stop[0], gdb.SignalEvent) and last_stop[0].stop_signal == "SIGINT"
        resume = "signal SIGINT" if interrupted else "continue"
else:
    # gdb's own messages go to the log once the program has its terminal
    # (it inherits gdb's stdout and stderr).
    log = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def quiet(event):
        if gdb.selected_inferior().pid:
            os.dup2(log, 1)
            os.dup2(log, 2)
            gdb.events.new_objfile.disconnect(quiet)

    gdb.events.new_objfile.connect(quiet)
    gdb.execute("set environment LD_PRELOAD=" + PRELOAD)
    gdb.execute("run")
    while gdb.selected_inferior().pid:
        try:
            gdb.execute("continue")
        except (gdb.error, KeyboardInterrupt):
            pass
code = gdb.convenience_variable("_exitcode")
signal = gdb.convenience_variable("_exitsignal")
if signal is not None:
    os.write(out, ("S %d\n" % int(signal)).encode())
elif code is not None:
    os.write(out, ("X %d\n" % int(code)).encode())
)py";

}  // namespace edgemem
