"""Running Reverie on its own: schedules, triggers, the scheduler, the daemon and workers."""
