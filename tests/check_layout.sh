#!/bin/sh
# check_layout.sh - the house follows the pipeline (HACKING.md): a file
# includes its own folder's header or those of folders earlier in the
# pipeline, never a later one, so no include runs back up or in a circle.
# Prints the folder include graph; fails naming each include that breaks
# the order.
srcdir=${GK_SRCDIR:-$(dirname "$0")/..}
cd "$srcdir" || exit 99
order="common syntax freeze lattice gate ir analysis backends compile runtime cli"
rank() {
    i=0
    for f in $order; do
        [ "$f" = "$1" ] && { echo $i; return; }
        i=$((i + 1))
    done
    echo -1
}
status=0
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
for dir in $order; do
    r=$(rank "$dir")
    for file in $(ls "$dir"/*.c "$dir"/*.h "$dir"/*.y "$dir"/*.l 2>/dev/null); do
        case $file in syntax/lexer.c | syntax/parser.c | syntax/parser.h) continue ;; esac
        for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file"); do
            case $inc in
            */*) to=${inc%%/*} ;;
            *) to=$dir ;; # a bare name: the folder's own header
            esac
            [ "$to" = grant ] && continue # the public header, below everything
            [ "$inc" = config.h ] && continue
            tr=$(rank "$to")
            if [ "$tr" -lt 0 ]; then
                echo "$file: includes \"$inc\" from no pipeline folder" >&2
                status=1
            elif [ "$tr" -gt "$r" ]; then
                echo "$file: includes \"$inc\": $to comes after $dir in the pipeline" >&2
                status=1
            elif [ "$to" != "$dir" ]; then
                echo "$dir -> $to" >>"$edges"
            fi
        done
    done
done
echo "folder include graph (pipeline order: $order):"
sort -u "$edges" | sed 's/^/  /'
[ $status -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $status
