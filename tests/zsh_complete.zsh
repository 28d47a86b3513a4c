#!/bin/zsh -f
# zsh_complete.zsh FPATH_DIR WORD... - what zsh's completion offers for the
# last WORD (empty: a new word) of the line WORD..., one match a line.
#
# Completion functions run only inside the line editor, so this drives a
# real one: an interactive zsh on a pseudo-terminal (zsh/zpty) runs
# compinit with FPATH_DIR first on fpath, the line is typed and TAB
# pressed. Every match the completion functions add goes through compadd,
# which the child wraps to write the matches to a file before adding them.
# The first output line is "compdef grantc=F grantrun=G": the functions
# compinit assigned from the files' #compdef lines. Exit status 3 when the
# completion printed an error (any "NAME:LINE: " from a shell function).
emulate -L zsh
setopt extendedglob
zmodload zsh/zpty || exit 99
(( $# >= 2 )) || { print -u2 "usage: $0 FPATH_DIR WORD..."; exit 2; }
dir=$1
shift
home=$(mktemp -d) || exit 2
out=$home/matches

# The words before the last are quoted; the last is the prefix being
# completed and is typed as it is.
typed=${(j: :)${(q)@[1,-2]}}
typed+=" $@[-1]"

# The child's whole setup is its .zshrc (and no global rc file: -d), so
# nothing is typed before its line editor runs (typeahead can be lost);
# zle-line-init says when it does. The markers are printed from two
# halves so that no echo of the setup could match them.
cat >$home/.zshrc <<EOF
PS1='' PS2='' PROMPT_EOL_MARK='' LISTMAX=100000
unsetopt beep autolist
fpath=(${(q)dir} \$fpath)
autoload -Uz compinit && compinit -u -D
out=${(q)out}
print -r -- "compdef grantc=\${_comps[grantc]} grantrun=\${_comps[grantrun]}" >\$out
compadd() {
  local -a gk_m
  if (( \${@[(I)-[OAD]*]} )); then builtin compadd "\$@"; return; fi
  builtin compadd -O gk_m "\$@"
  (( \$#gk_m )) && print -rl -- \$gk_m >>\$out
  builtin compadd "\$@"
}
gk-tab() { zle complete-word; print -n -- "\n<<GK""DONE>>\n"; }
zle -N gk-tab
bindkey '^I' gk-tab
zle-line-init() { [[ -n \$gk_ready ]] && return; gk_ready=1; print -n -- "<<GK""READY>>"; }
zle -N zle-line-init
EOF

export ZDOTDIR=$home
zpty gk zsh -d -i || exit 2
# Set only now: zpty's forked copy of this shell would run it too when
# the child is ended, and remove the matches before they are read.
trap 'rm -rf -- $home' EXIT
zpty -r gk ready '*<<GKREADY>>*' || exit 2
zpty -w -n gk "$typed"$'\t'
zpty -r gk shown '*<<GKDONE>>*' || exit 2
matches=$(<$out)
zpty -d gk

print -r -- "$matches"
# "_grantc:12: command not found: x", "__grantkit_specs:3: bad pattern"
errors=( ${(M)${(f)shown}:#*_[a-z_]##:[0-9]##: *} )
if (( $#errors )); then
  print -ru2 -- $errors
  exit 3
fi
exit 0
