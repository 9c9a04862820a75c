// keepvars_coro.cc - a C++20 coroutine: --keep-vars leaves it alone (t_keepvars.sh).
#include <coroutine>
#include <cstdio>
struct Gen {
  struct promise_type {
    int cur = 0;
    Gen get_return_object() { return Gen{std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    std::suspend_always yield_value(int v) { cur = v; return {}; }
    void return_void() {}
    void unhandled_exception() {}
  };
  std::coroutine_handle<promise_type> h;
  ~Gen() { h.destroy(); }
};
Gen count(int n) { for (int i = 0; i < n; i++) if (i % 2 == 0) co_yield i; }
int main() { Gen g = count(9); int s = 0; while (true) { g.h.resume(); if (g.h.done()) break; s += g.h.promise().cur; } std::printf("%d\n", s); }
