/* One report per interval: see ratelimit.h. */
#include "core/ratelimit.h"

bool mf_ratelimit_pass(mf_ratelimit *rl, double now, unsigned *held)
{
    if (rl->rl_last >= 0 && now - rl->rl_last < rl->rl_interval) {
        rl->rl_held++;
        return false;
    }
    *held = rl->rl_held;
    rl->rl_held = 0;
    rl->rl_last = now;
    return true;
}
