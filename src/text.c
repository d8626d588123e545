/* text.c */
#include "kerndiff/text.h"
