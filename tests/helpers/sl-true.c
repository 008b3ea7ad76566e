/* sl-true: exits 0 at once. The cheapest static program to exec, for exec
 * storms (bench/exec-storm.sh) where the exec itself, not the program,
 * should be what costs. */
int main(void)
{
	return 0;
}
