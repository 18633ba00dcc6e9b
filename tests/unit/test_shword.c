/* The gate's shell splitter: simple commands, unquoted words, output
 * redirection targets, pipes, substitutions and here-documents. */
#include <stdlib.h>
#include <string.h>

#include "shword.h"
#include "tap.h"

/* "cmd0word0 cmd0word1 [>t] | cmd1word0 ..." rendering of a split line. */
static void render(const struct sh_line *l, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < l->n_cmds && o < size; i++) {
		const struct sh_cmd *c = &l->cmds[i];
		for (size_t k = 0; k < c->n_words && o < size; k++)
			o += (size_t)snprintf(buf + o, size - o, "%s%s", k ? " " : "", c->words[k]);
		for (size_t k = 0; k < c->n_redirs && o < size; k++)
			o += (size_t)snprintf(buf + o, size - o, " [>%s]", c->redirs[k].target);
		if (i + 1 < l->n_cmds && o < size)
			o += (size_t)snprintf(buf + o, size - o, "%s", c->pipes_next ? " | " : " ; ");
	}
}

static void split_is(const char *text, const char *want)
{
	struct sh_line l;
	char got[1024];

	ok(shword_split(text, &l) == 0, "split: %s", text);
	render(&l, got, sizeof(got));
	is_str(got, want, "  -> %s", want);
	shword_free(&l);
}

int main(void)
{
	split_is("echo hello world", "echo hello world");
	split_is("echo 'a b' \"c $d\" e\\ f", "echo a b c $d e f");
	split_is("a && b || c; d & e", "a ; b ; c ; d ; e");
	split_is("curl x | sh", "curl x | sh");
	split_is("make 2>&1 | tee log", "make | tee log");
	split_is("cmd >out 2>>err &>all >|clob", "cmd [>out] [>err] [>all] [>clob]");
	split_is("echo x>/etc/hosts", "echo x [>/etc/hosts]");
	split_is("sort <in >out", "sort [>out]");
	split_is("ls $(rm -rf x) `pwd`", "ls ; rm -rf x ; pwd");
	split_is("bash <(curl -s u)", "bash ; curl -s u");
	split_is("( cd a && make ) ; { echo b; }", "cd a ; make ; echo b");
	split_is("echo ${HOME}/x", "echo ${HOME}/x");
	split_is("cat <<EOF >f\nrm -rf /\nEOF\nls", "cat [>f] ; ls");
	split_is("cat <<-X\n\tbody\n\tX\necho after", "cat ; echo after");
	split_is("grep a <<< 'b c'", "grep a");
	split_is("echo a # rm -rf /", "echo a");
	split_is("echo 'unterminated", "echo unterminated");

	char *argv[] = { "printf", "%s\n", "it's", "a b", "plain-1.0", NULL };
	char *j = shword_join(argv);
	is_str(j, "printf '%s\n' 'it'\\''s' 'a b' plain-1.0", "join quotes what needs it");
	free(j);
	return done_testing();
}
