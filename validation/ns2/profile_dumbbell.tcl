# ns-2.35 at its ns-default.tcl values on a dumbbell, for cross-checking aqmlab's `profile = "ns2"`
# (aqmlab.ns2ref: the ECN Reno case under RED and the Sack1 case with the 20-packet receiver window).
# Usage: ns profile_dumbbell.tcl <seed> <duration_s> <warmup_s> <reno|sack1> <ecn 0|1> <mbps> <delay_ms>
#        <red|droptail> <limit> <min_th> <max_th> <max_p> <access_ms...>   (python -m aqmlab.ns2ref drives it)
# TCP: Agent/TCP/Reno (+ Agent/TCPSink) or Agent/TCP/Sack1 (+ Agent/TCPSink/Sack1) with every
# ns-default.tcl value kept (window_ 20, windowInit_ 2, packetSize_ 1000 + tcpip_base_hdr_size_ 40 on
# the wire, minrto_ 0.2, tcpTick_ 0.01, rtxcur_init_ 3.0, singledup_ 1, bugFix_, precisionReduce_,
# SetCWRonRetransmit_), ecn_ as given. Bottleneck <mbps> / <delay_ms> under Queue/RED (thresh_, maxthresh_,
# linterm_ = 1/max_p, q_weight_ 0.002, mean_pktsize_ 1000, setbit_ = ecn, and ns-default.tcl's gentle_,
# wait_, mark_p_ 0.1, use_mark_p_) or Queue/DropTail, queue-limit <limit>; 100 Mb/s access links, flow
# i's one-way delay access_ms[i] on the sender's side, 0 ms on the receiver's; starts uniform in [0, 1) s.
# Prints per flow "flow <i> <goodput_bps> <timeouts> <retransmitted packets>" (after warmup; goodput from
# unique 1000-B segments acked, payload bits; timeouts = nrexmit_, which ns-2 does not bump for a timeout
# in an ECN-reduced window), "queue <arrivals> <drops>" for the bottleneck and "qmean <packets>": its
# time-average length after warmup (the queue monitor's packet integrator).
set seed [lindex $argv 0]
set duration [lindex $argv 1]
set warmup [lindex $argv 2]
set agent [lindex $argv 3]
set ecn [lindex $argv 4]
set mbps [lindex $argv 5]
set delay_ms [lindex $argv 6]
set qkind [lindex $argv 7]
set limit [lindex $argv 8]
set min_th [lindex $argv 9]
set max_th [lindex $argv 10]
set max_p [lindex $argv 11]
set delays [lrange $argv 12 end]

ns-random $seed
set ns [new Simulator]
Agent/TCP set ecn_ $ecn
# Overrides for experiments: NS2_TCP="name value ..." sets further Agent/TCP variables.
if {[info exists env(NS2_TCP)]} { foreach {name value} $env(NS2_TCP) { Agent/TCP set $name $value } }
Queue/RED set thresh_ $min_th
Queue/RED set maxthresh_ $max_th
Queue/RED set linterm_ [expr 1.0 / $max_p]
Queue/RED set q_weight_ 0.002
Queue/RED set mean_pktsize_ 1000
Queue/RED set bytes_ false
Queue/RED set queue_in_bytes_ false
Queue/RED set setbit_ [expr {$ecn ? "true" : "false"}]
if {[info exists env(NS2_RED)]} { foreach {name value} $env(NS2_RED) { Queue/RED set $name $value } }

set r1 [$ns node]
set r2 [$ns node]
if {$qkind == "red"} { set q RED } else { set q DropTail }
$ns duplex-link $r1 $r2 ${mbps}Mb ${delay_ms}ms $q
$ns queue-limit $r1 $r2 $limit
$ns queue-limit $r2 $r1 10000
set qmon [$ns monitor-queue $r1 $r2 ""]

set rng [new RNG]
$rng seed [expr $seed + 1]
set n [llength $delays]
for {set i 0} {$i < $n} {incr i} {
    set d [lindex $delays $i]
    set s($i) [$ns node]
    set k($i) [$ns node]
    $ns duplex-link $s($i) $r1 100Mb ${d}ms DropTail
    $ns duplex-link $r2 $k($i) 100Mb 0ms DropTail
    $ns queue-limit $s($i) $r1 10000
    $ns queue-limit $k($i) $r2 10000
    if {$agent == "sack1"} {
        set tcp($i) [new Agent/TCP/Sack1]
        set sink($i) [new Agent/TCPSink/Sack1]
    } else {
        set tcp($i) [new Agent/TCP/Reno]
        set sink($i) [new Agent/TCPSink]
    }
    $ns attach-agent $s($i) $tcp($i)
    $ns attach-agent $k($i) $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $tcp($i)
    $ns at [$rng uniform 0 1] "$ftp($i) start"
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
        puts "flow $i [expr $acked * 8000.0 / ($duration - $warmup)] $to $rx"
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
