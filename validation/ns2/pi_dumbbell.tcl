# Kumar 2003's PI dumbbell (Sec. 5.1) in ns-2.35's Queue/PI, for cross-checking aqmlab's `pi` (aqmlab.ns2ref).
# Usage: ns pi_dumbbell.tcl <seed> <duration_s> <warmup_s> <n_flows> <bottleneck_mbps>
#        (python -m aqmlab.ns2ref drives it)
# Mirrors python/aqmlab/repro/tsq_scenarios.py (PI alone, FTP flows only): bottleneck <mbps> / 50 ms
# with Queue/PI a_ 1.822e-5, b_ 1.816e-5, w_ 170 Hz, qref_ 200, queue-limit 800 packets (packets, no
# byte mode, no ECN); 50 Mb/s / 50 ms access links on both sides (300 ms RTT); n long-lived FTP
# flows over Agent/TCP/Newreno with ns-default.tcl's values (window_ 20, windowInit_ 2, minrto_ 0.2,
# tcpTick_ 0.01, rtxcur_init_ 3.0, singledup_ 1, bugFix_, newreno_changes1_ 1) except packetSize_ 960,
# so that a segment is 1000 B on the wire (960 + tcpip_base_hdr_size_ 40); Agent/TCPSink (an ACK per
# packet, 40 B); starts uniform in [0, 5) s.
# Prints per flow "flow <i> <goodput_bps> <timeouts> <retransmitted packets>" (after warmup; goodput
# from unique 960-B segments acked, payload bits), "queue <arrivals> <drops>" for the bottleneck and
# "qmean <packets>": its time-average length after warmup (the queue monitor's packet integrator).
set seed [lindex $argv 0]
set duration [lindex $argv 1]
set warmup [lindex $argv 2]
set n [lindex $argv 3]
set mbps [lindex $argv 4]

ns-random $seed
set ns [new Simulator]
Agent/TCP set packetSize_ 960
# Overrides for experiments: NS2_TCP="name value ..." sets further Agent/TCP variables.
if {[info exists env(NS2_TCP)]} { foreach {name value} $env(NS2_TCP) { Agent/TCP set $name $value } }
Queue/PI set a_ 1.822e-5
Queue/PI set b_ 1.816e-5
Queue/PI set w_ 170
Queue/PI set qref_ 200
Queue/PI set bytes_ false
Queue/PI set queue_in_bytes_ false
Queue/PI set setbit_ false

set r1 [$ns node]
set r2 [$ns node]
$ns simplex-link $r1 $r2 ${mbps}Mb 50ms PI
$ns simplex-link $r2 $r1 ${mbps}Mb 50ms DropTail
$ns queue-limit $r1 $r2 800
$ns queue-limit $r2 $r1 10000
set qmon [$ns monitor-queue $r1 $r2 ""]

set rng [new RNG]
$rng seed [expr $seed + 1]
for {set i 0} {$i < $n} {incr i} {
    set s($i) [$ns node]
    set k($i) [$ns node]
    $ns duplex-link $s($i) $r1 50Mb 50ms DropTail
    $ns duplex-link $r2 $k($i) 50Mb 50ms DropTail
    $ns queue-limit $s($i) $r1 10000
    $ns queue-limit $r2 $k($i) 10000
    set tcp($i) [new Agent/TCP/Newreno]
    set sink($i) [new Agent/TCPSink]
    $ns attach-agent $s($i) $tcp($i)
    $ns attach-agent $k($i) $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $tcp($i)
    $ns at [$rng uniform 0 5] "$ftp($i) start"
}

proc mark_start {} {
    global tcp n start_ack start_to start_rx qmon start_arr start_drop start_int
    for {set i 0} {$i < $n} {incr i} {
        set start_ack($i) [$tcp($i) set ack_]
        set start_to($i) [$tcp($i) set nrexmit_]
        set start_rx($i) [$tcp($i) set nrexmitpack_]
    }
    set start_arr [$qmon set parrivals_]
    set start_drop [$qmon set pdrops_]
    set start_int [[$qmon get-pkts-integrator] set sum_]
}
proc finish {} {
    global ns tcp n start_ack duration warmup start_to start_rx qmon start_arr start_drop start_int
    for {set i 0} {$i < $n} {incr i} {
        set acked [expr [$tcp($i) set ack_] - $start_ack($i)]
        set to [expr [$tcp($i) set nrexmit_] - $start_to($i)]
        set rx [expr [$tcp($i) set nrexmitpack_] - $start_rx($i)]
        puts "flow $i [expr $acked * 960 * 8.0 / ($duration - $warmup)] $to $rx"
    }
    puts "queue [expr [$qmon set parrivals_] - $start_arr] [expr [$qmon set pdrops_] - $start_drop]"
    set integ [$qmon get-pkts-integrator]
    $integ newpoint [$ns now] [$qmon set pkts_]
    puts "qmean [expr ([$integ set sum_] - $start_int) / ($duration - $warmup)]"
    exit 0
}
$ns at $warmup "mark_start"
$ns at $duration "finish"
$ns run
