"""Running test code in several threads at once."""

import threading


def run_in_threads(work, arg_tuples):
    """Runs work(*args) for each args of arg_tuples, each in its own thread, all at once,
    and waits for them; returns the exceptions they raised (reported in the caller's
    thread, where a test can assert on them)."""
    errors = []

    def run(*args):
        try:
            work(*args)
        except Exception as exc:  # noqa: BLE001 (any failure is the test's)
            errors.append(exc)

    threads = [threading.Thread(target=run, args=args) for args in arg_tuples]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors
