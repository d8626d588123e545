/* cmd_diff.c */
