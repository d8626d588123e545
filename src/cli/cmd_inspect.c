/* cmd_inspect.c */
