// exc_plain.cpp - uninstrumented catcher for exc.cpp: an exception thrown
// through instrumented frames is caught here, where no landing pad of an
// instrumented function resets the chain (__cxa_begin_catch does).
#include <stdexcept>

void thrower(int n);

int catch_plain(int n)
{
    try {
        thrower(n);
    } catch (const std::runtime_error &) {
        return 1;
    }
    return 0;
}
