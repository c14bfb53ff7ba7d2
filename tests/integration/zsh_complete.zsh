# tests/integration/zsh_complete.zsh DIR: types command lines and a Tab into an
# interactive zsh (zpty) whose fpath starts with DIR (where _appsim is), and checks
# what the completion offers. Used by install.sh; exits 1 on the first miss.
setopt extendedglob
zmodload zsh/zpty || exit 1
zpty shell 'zsh -f -i'
zpty -w shell "PS1='> '; fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D"
zpty -w shell "zstyle ':completion:*' list-prompt ''"

# LINE WANT: Tab after LINE must show WANT within 10 s.
expect() {
  local line=$1 want=$2 out= chunk= i
  zpty -w -n shell "$line"$'\t'
  for i in {1..100}; do
    sleep 0.1
    while zpty -r -t shell chunk; do out+=$chunk; done
    out=${out//$'\e'\[[0-9;?]#[A-Za-z]/}
    [[ $out == *$want* ]] && break
  done
  zpty -w shell $'\C-u'
  sleep 0.2
  while zpty -r -t shell chunk; do :; done
  if [[ $out != *$want* ]]; then
    print -r -- "zsh: Tab after '$line' did not offer '$want'; the terminal showed:"
    print -r -- "$out" | tr -d '\r' | tail -5
    zpty -d shell
    exit 1
  fi
}

expect 'appsim tp' 'appsim tpcc '
expect 'appsim tpcc --pac' '--pacing='
expect 'appsim tpcc --pacing ' 'review'
expect 'appsim trace in' 'appsim trace info '
expect 'appsim trace info --fo' '--format='
expect 'appsim sysbench ' 'prepare'
expect 'appsim tpcc --ti' '--time='
expect 'appsim io --rdp' '--rdpct='
expect 'appsim replay --dur' '--duration='
zpty -d shell
print ok
