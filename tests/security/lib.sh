# Shared by impostor.sh and flood.sh (sourced).

# wait_file PATH TENTHS [PID]: waits until PATH exists, at most TENTHS tenths of a second, or
# until process PID ends. Succeeds when PATH exists.
wait_file() {
    for _ in $(seq "$2"); do
        [ -e "$1" ] && return 0
        [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null && break
        sleep 0.1
    done
    [ -e "$1" ]
}
