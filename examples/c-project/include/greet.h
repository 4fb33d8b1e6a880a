/* greet.h: the greeting. */
void greet(const char *who);
