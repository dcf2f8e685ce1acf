# WHITE (Lee 2002) dumbbells in ns-2.35 (RED, drop-tail, DRR, REM), for cross-checking aqmlab (aqmlab.ns2ref).
# Usage: ns white_dumbbell.tcl <seed> <duration_s> <warmup_s> <red|droptail|drr|rem> <limit> <min_th> <max_th>
#        <max_p> <access_ms...>   (python -m aqmlab.ns2ref drives it)
# Mirrors python/aqmlab/repro/white_scenarios.py: 10 Mb/s 5 ms bottleneck, 100 Mb/s access links,
# Reno, IW 2, window 64, 1000-byte packets with no header added, no delayed ACKs, 100 ms tick,
# 1 s minimum RTO, 6 s initial RTO, no limited transmit (ns-2.1b8 predates singledup_), ns-2's
# default bugFix_ (aqmlab: fast_retransmit_guard = "ns2"); RED w_q 0.002, gentle, wait, 500 B.
# Prints per flow "flow <i> <goodput_bps> <timeouts> <retransmitted packets>" (after warmup; goodput
# from unique segments acked) and "queue <arrivals> <drops>" for the bottleneck, then
# "qmean <packets>": its time-average length after warmup (the queue monitor's packet integrator).
set seed [lindex $argv 0]
set duration [lindex $argv 1]
set warmup [lindex $argv 2]
set qkind [lindex $argv 3]
set limit [lindex $argv 4]
set min_th [lindex $argv 5]
set max_th [lindex $argv 6]
set max_p [lindex $argv 7]
set delays [lrange $argv 8 end]

ns-random $seed
set ns [new Simulator]
Agent/TCP set packetSize_ 1000
Agent/TCP set tcpip_base_hdr_size_ 0
# (ns-2 prints a warning per packet for a 0-byte header; callers keep only the "flow" lines)
Agent/TCP set window_ 64
Agent/TCP set windowInit_ 2
Agent/TCP set tcpTick_ 0.1
Agent/TCP set minrto_ 1.0
Agent/TCP set rtxcur_init_ 6.0
Agent/TCP set syn_ false
Agent/TCP set singledup_ 0
Agent/TCPSink set packetSize_ 40
# Overrides for experiments: NS2_TCP="name value ..." sets further Agent/TCP variables.
if {[info exists env(NS2_TCP)]} { foreach {name value} $env(NS2_TCP) { Agent/TCP set $name $value } }
Queue/RED set thresh_ $min_th
Queue/RED set maxthresh_ $max_th
Queue/RED set linterm_ [expr 1.0 / $max_p]
Queue/RED set q_weight_ 0.002
Queue/RED set gentle_ true
Queue/RED set wait_ true
Queue/RED set mean_pktsize_ 500
Queue/RED set bytes_ false
Queue/RED set queue_in_bytes_ false
Queue/RED set setbit_ false

set r1 [$ns node]
set r2 [$ns node]
# drr: ns-2's Queue/DRR with blimit_ = limit × 1000 B, quantum_ 250 (its default) and enough
# buckets_ that the 30 sources' hashed addresses fall in separate bins (aqmlab: one bin per flow).
# rem: ns-2's Queue/REM with every ns-default.tcl value (gamma_ 0.001, phi_ 1.001, inw_ 1,
# pbo_ 20, pupdtime_ 0.002, mean_pktsize_ 1000 = the packet size, markpkts_ false, qib_ false);
# only the buffer is the dumbbell's (queue-limit). ns-lib.tcl hands REM the link, so ptc_ = 1250 pkt/s.
if {$qkind == "red"} { set q RED } elseif {$qkind == "drr"} { set q DRR } elseif {$qkind == "rem"} { set q REM } else { set q DropTail }
Queue/DRR set blimit_ [expr $limit * 1000]
Queue/DRR set buckets_ 1000
Queue/DRR set mask_ 0
$ns duplex-link $r1 $r2 10Mb 5ms $q
$ns queue-limit $r1 $r2 $limit
$ns queue-limit $r2 $r1 1000
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
    $ns queue-limit $s($i) $r1 1000
    $ns queue-limit $k($i) $r2 1000
    set tcp($i) [new Agent/TCP/Reno]
    set sink($i) [new Agent/TCPSink]
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
