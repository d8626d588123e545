/* cmd_triage.c */
